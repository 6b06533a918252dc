import type {
  AssistantMessage,
  DeveloperMessage,
  Message,
  ToolResultMessage,
  UserMessage,
} from '@kode/protocol'
import {
  type ImageFiles,
  imageUrlOf,
  type LLMRequest,
  MessageCache,
  prepareMessages,
  sendableArguments,
} from '@kode/providers/adapter'

/** Cohere v2 chat content and messages (the subset this plugin sends). */
export type CohereContent = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } }

export type CohereMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: CohereContent[] }
  | {
      role: 'assistant'
      content?: { type: 'text'; text: string }[]
      tool_calls?: { id: string; type: 'function'; function: { name: string; arguments: string } }[]
    }
  | { role: 'tool'; tool_call_id: string; content: string }

/**
 * Messages -> Cohere `messages`. `prepareMessages` has already applied the rules every wire shares
 * (system prompt pieces, developer messages folded into the user or tool message before them,
 * empty assistant messages dropped, missing tool results synthesised, orphan results dropped) and
 * read the image files. What is left is the table
 * of this wire: user content, assistant text and tool calls, tool results as text. Reasoning goes
 * back as text rendered by `thinkingAsText` (Cohere has no signed reasoning to return).
 */
export function createCohereMessageMapper(thinkingAsText: ((text: string) => string) | undefined) {
  const users = new MessageCache<CohereContent[]>()
  const assistants = new MessageCache<CohereMessage | null>()
  const cached = (m: Message) => users.has(m)

  return async function cohereMessages(
    request: LLMRequest,
    readImageFile: ((path: string) => Promise<Uint8Array>) | undefined,
  ): Promise<CohereMessage[]> {
    const view = await prepareMessages(request, { readImageFile, converted: cached })
    const contentOf = (m: UserMessage | DeveloperMessage) => users.get(m, (u) => convertUser(u, view.files))
    const out: CohereMessage[] = view.system.map((content) => ({ role: 'system', content }))
    for (const entry of view.entries) {
      switch (entry.role) {
        case 'user':
          out.push({
            role: 'user',
            content: [...contentOf(entry.message), ...entry.appended.flatMap(contentOf)],
          })
          break
        case 'tool':
          out.push(toolMessage(entry.message, entry.appended))
          break
        case 'assistant': {
          const message = assistants.get(entry.message, (m) => convertAssistant(m, thinkingAsText))
          if (message) out.push(message)
          break
        }
        default: {
          const unknown: never = entry
          throw new TypeError(`unknown entry ${JSON.stringify(unknown)}`)
        }
      }
    }
    return out
  }
}

function convertUser(message: UserMessage | DeveloperMessage, files: ImageFiles): CohereContent[] {
  return message.parts.map((part) =>
    part.type === 'text'
      ? { type: 'text', text: part.text }
      : { type: 'image_url', image_url: { url: imageUrlOf(part, files) } },
  )
}

/** Tool text from `outputText`, with the text of developer messages that follow it appended. */
function toolMessage(message: ToolResultMessage, appended: readonly DeveloperMessage[]): CohereMessage {
  let content = message.outputText
  for (const dev of appended) {
    for (const part of dev.parts)
      if (part.type === 'text') content = content ? `${content}\n\n${part.text}` : part.text
  }
  return { role: 'tool', tool_call_id: message.toolCallId, content }
}

function convertAssistant(
  message: AssistantMessage,
  thinkingAsText: ((text: string) => string) | undefined,
): CohereMessage | null {
  const content: { type: 'text'; text: string }[] = []
  const calls: NonNullable<Extract<CohereMessage, { role: 'assistant' }>['tool_calls']> = []
  for (const part of message.parts) {
    if (part.type === 'text' && part.text) content.push({ type: 'text', text: part.text })
    else if (part.type === 'thinking_text' && part.text && thinkingAsText)
      content.push({ type: 'text', text: thinkingAsText(part.text) })
    else if (part.type === 'tool_call') {
      const args = sendableArguments(part.argumentsJson, part.incomplete)
      calls.push({ id: part.id, type: 'function', function: { name: part.name, arguments: args } })
    }
  }
  if (content.length === 0 && calls.length === 0) return null
  const out: CohereMessage = { role: 'assistant' }
  if (content.length > 0) out.content = content
  if (calls.length > 0) out.tool_calls = calls
  return out
}

/** The `/v2/chat` request body; `safetyMode` is the plugin's own option (see `CohereOptions`). */
export function cohereBody(
  request: LLMRequest,
  model: string,
  messages: CohereMessage[],
  options: { safetyMode?: string } = {},
) {
  const body: Record<string, unknown> = { model, messages, stream: true }
  if (options.safetyMode !== undefined) body.safety_mode = options.safetyMode
  if (request.maxOutputTokens !== undefined) body.max_tokens = request.maxOutputTokens
  if (request.temperature !== undefined) body.temperature = request.temperature
  if (request.reasoning?.budgetTokens !== undefined)
    body.thinking = { type: 'enabled', token_budget: request.reasoning.budgetTokens }
  const choice = request.toolChoice
  // Cohere's tool_choice names no tool: a named choice offers that tool alone and requires a call.
  const named = typeof choice === 'object' ? choice.name : undefined
  const tools = (request.tools ?? []).filter((tool) => named === undefined || tool.name === named)
  if (tools.length > 0) {
    body.tools = tools.map((tool) => ({
      type: 'function',
      function: { name: tool.name, description: tool.description, parameters: tool.parameters },
    }))
  }
  if (choice === 'required' || named !== undefined) body.tool_choice = 'REQUIRED'
  else if (choice === 'none') body.tool_choice = 'NONE'
  return body
}
