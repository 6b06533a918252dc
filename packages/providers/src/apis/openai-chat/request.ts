import type {
  AssistantMessage,
  DeveloperMessage,
  Message,
  ToolResultMessage,
  UserContentPart,
  UserMessage,
} from '@kode/protocol'
import { joinThinking } from '@kode/protocol/helpers'
import type { FixedTemperature, LLMRequest } from '../../types.js'
import { type ImageFiles, imageUrlOf } from '../shared/images.js'
import { jsonSchemaFormat } from '../shared/json-schema-format.js'
import { MessageCache } from '../shared/message-cache.js'
import { MessagePreparer } from '../shared/message-preparer.js'
import type { ViewEntry } from '../shared/prepare-messages.js'
import { SettledItems, type WireItems } from '../shared/settled-items.js'
import { sentTemperature } from '../shared/temperature.js'
import { isOwnMessage, type Speaker } from '../shared/thinking.js'
import { sendableArguments } from '../shared/tool-arguments.js'
import { TOOL_CALL_ID_RULES, toolCallIdFitter } from '../shared/tool-call-ids.js'
import { declaresProviderTools, sentToolChoice } from '../shared/tool-choice.js'
import { ToolImageRun, toolImageContent } from '../shared/tool-images.js'

/** Chat Completions wire types (the subset Kode sends). */
export type ChatContentPart =
  | { type: 'text'; text: string }
  | { type: 'image_url'; image_url: { url: string } }

export interface ChatToolCall {
  id: string
  type: 'function'
  function: { name: string; arguments: string }
}

export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string | ChatContentPart[] }
  | { role: 'assistant'; content: string | null; tool_calls?: ChatToolCall[]; [field: string]: unknown }
  | { role: 'tool'; tool_call_id: string; content: string }

/** How an assistant message's reasoning goes back: in extra fields, not at all, or as text. */
export type ReasoningReplay =
  | { kind: 'fields'; fields: Record<string, unknown> }
  | { kind: 'omit' }
  | { kind: 'text' }

/** What differs between chat dialects (plain openai-chat, OpenRouter). */
export interface ChatDialect {
  speaker: Speaker
  /** Rendering of reasoning sent as text; `undefined` drops it. */
  thinkingAsText: ((text: string) => string) | undefined
  /** Decides how this message's reasoning is replayed; `own` = produced by this very client setup. */
  replayReasoning(message: AssistantMessage, own: boolean): ReasoningReplay
  /**
   * Rewrites tool-call ids the server would reject (see `fitToolCallId`), calls and results alike.
   * Default: OpenAI's limit of 40 characters.
   */
  toolCallId?(id: string): string
}

interface ConvertedUser {
  parts: ChatContentPart[]
  message: ChatMessage
}

interface ConvertedTool {
  message: { role: 'tool'; tool_call_id: string; content: string }
  images: ChatContentPart[]
}

/** A request's Chat Completions `messages`: the system messages, then the history's. */
export interface ChatMessages {
  system: ChatMessage[]
  history: WireItems<ChatMessage>
}

/**
 * Messages -> Chat Completions `messages`: developer messages folded into the
 * preceding user or tool message, tool text from `outputText`, tool and developer images after
 * the run of tool messages (tool messages carry text only), missing tool results synthesised.
 * Conversions are cached per message object for the life of the client, and the messages made
 * from a history's settled part are kept for its next request (see `SettledItems`).
 */
export function createChatMessageMapper(dialect: ChatDialect) {
  const toolCallId = dialect.toolCallId ?? toolCallIdFitter(TOOL_CALL_ID_RULES['openai-chat'])
  const preparer = new MessagePreparer()
  const settled = new SettledItems<ChatMessage>()
  const users = new MessageCache<ConvertedUser>()
  const tools = new MessageCache<ConvertedTool>()
  const assistants = new MessageCache<ChatMessage | null>()
  const cached = (m: Message) => users.has(m) || tools.has(m)

  return async function chatMessages(
    request: LLMRequest,
    readImageFile: ((path: string) => Promise<Uint8Array>) | undefined,
  ): Promise<ChatMessages> {
    const view = await preparer.prepare(request, { readImageFile, converted: cached })
    const files = view.files
    return {
      system: view.system.map((content) => ({ role: 'system', content })),
      // A run of tool images ends where the settled entries do: a user or assistant entry follows.
      history: settled.items(view, (entries) => entryMessages(entries, files)),
    }
  }

  function entryMessages(entries: readonly ViewEntry[], files: ImageFiles): ChatMessage[] {
    const out: ChatMessage[] = []
    const images = new ToolImageRun<ChatContentPart>((content) => out.push({ role: 'user', content }))
    for (const entry of entries) {
      images.next(entry)
      switch (entry.role) {
        case 'user':
          out.push(userMessage(entry, files))
          break
        case 'tool': {
          const tool = tools.get(entry.message, (m) => convertTool(m, files, toolCallId))
          images.add(tool.images)
          out.push(
            entry.appended.length === 0
              ? tool.message
              : withAppendedText(tool, entry.appended, files, images),
          )
          break
        }
        case 'assistant': {
          const message = assistants.get(entry.message, (m) => convertAssistant(m, dialect, toolCallId))
          if (message) out.push(message)
          break
        }
        default: {
          const unknown: never = entry
          throw new TypeError(`unknown entry ${JSON.stringify(unknown)}`)
        }
      }
    }
    images.end()
    return out
  }

  function userMessage(entry: Extract<ViewEntry, { role: 'user' }>, files: ImageFiles): ChatMessage {
    const own = users.get(entry.message, (m) => convertUser(m, files))
    if (entry.appended.length === 0) return own.message
    const parts = [...own.parts]
    for (const dev of entry.appended) parts.push(...users.get(dev, (m) => convertUser(m, files)).parts)
    return { role: 'user', content: collapse(parts) }
  }
}

function convertUser(message: UserMessage | DeveloperMessage, files: ImageFiles): ConvertedUser {
  const parts = message.parts.map((part) => contentPart(part, files))
  return { parts, message: { role: 'user', content: collapse(parts) } }
}

function contentPart(part: UserContentPart, files: ImageFiles): ChatContentPart {
  return part.type === 'text'
    ? { type: 'text', text: part.text }
    : { type: 'image_url', image_url: { url: imageUrlOf(part, files) } }
}

/** Text-only content as one string: every OpenAI-compatible server accepts that. */
function collapse(parts: ChatContentPart[]): string | ChatContentPart[] {
  if (parts.some((p) => p.type !== 'text')) return parts
  return parts.map((p) => (p as { text: string }).text).join('\n\n')
}

function convertTool(
  message: ToolResultMessage,
  files: ImageFiles,
  toolCallId: (id: string) => string,
): ConvertedTool {
  const id = toolCallId(message.toolCallId)
  const images = toolImageContent<ChatContentPart>(message, id, {
    text: (text) => ({ type: 'text', text }),
    image: (part) => contentPart(part, files),
  })
  return { message: { role: 'tool', tool_call_id: id, content: message.outputText }, images }
}

/** A tool message with developer text appended; developer images join the run's image message. */
function withAppendedText(
  tool: ConvertedTool,
  appended: readonly DeveloperMessage[],
  files: ImageFiles,
  images: ToolImageRun<ChatContentPart>,
): ChatMessage {
  let content = tool.message.content
  for (const dev of appended) {
    for (const part of dev.parts) {
      if (part.type === 'text') content = content ? `${content}\n\n${part.text}` : part.text
      else images.add([contentPart(part, files)])
    }
  }
  return { ...tool.message, content }
}

function convertAssistant(
  message: AssistantMessage,
  dialect: ChatDialect,
  toolCallId: (id: string) => string,
): ChatMessage | null {
  const replay = dialect.replayReasoning(message, isOwnMessage(message, dialect.speaker))
  const render = replay.kind === 'text' ? dialect.thinkingAsText : undefined
  const texts: string[] = []
  const calls: ChatToolCall[] = []
  for (const part of message.parts) {
    switch (part.type) {
      case 'text':
        if (part.text) texts.push(part.text)
        break
      case 'thinking_text':
        if (render && part.text) texts.push(render(part.text))
        break
      case 'tool_call':
        calls.push({
          id: toolCallId(part.id),
          type: 'function',
          function: { name: part.name, arguments: sendableArguments(part.argumentsJson, part.incomplete) },
        })
        break
      case 'thinking_signature':
      case 'image_url':
      case 'image_file':
      case 'server_tool':
        // Chat Completions has no place for signatures, images or server-tool blocks in assistant messages.
        break
      default: {
        const unknown: never = part
        throw new TypeError(`unknown part ${JSON.stringify(unknown)}`)
      }
    }
  }
  const fields = replay.kind === 'fields' ? replay.fields : undefined
  if (texts.length === 0 && calls.length === 0 && !fields) return null
  // `content` may be null only beside `tool_calls`: a message holding reasoning alone sends ''.
  const content = texts.length > 0 ? texts.join('\n\n') : calls.length > 0 ? null : ''
  const out: ChatMessage = { role: 'assistant', content }
  if (calls.length > 0) out.tool_calls = calls
  if (fields) Object.assign(out, fields)
  return out
}

/**
 * openai-chat's own reasoning replay: this model's thinking in `field`, anything else as text. A
 * message that reasoned nothing while its server streamed `field` (kept empty in its `openai-chat`
 * provider fields, see `createChatEventMapper`) sends the field empty.
 */
export function chatReasoningReplay(field: string | false) {
  return (message: AssistantMessage, own: boolean): ReasoningReplay => {
    if (!own) return { kind: 'text' }
    if (field === false) return { kind: 'omit' }
    const thinking = joinThinking(message.parts) ?? emptyReasoning(message, field)
    return thinking === undefined ? { kind: 'omit' } : { kind: 'fields', fields: { [field]: thinking } }
  }
}

/** `''` when the message's server streamed `field` and nothing came in it; else `undefined`. */
function emptyReasoning(message: AssistantMessage, field: string): '' | undefined {
  const kept = message.providerFields
  return kept?.format === 'openai-chat' && kept.fields[field] === '' ? '' : undefined
}

/** Options of the request body beyond the messages. */
export interface ChatBodyOptions {
  model: string
  includeUsage: boolean
  maxTokensField: 'max_completion_tokens' | 'max_tokens'
  /** The catalog's word on the model's temperature (see {@link sentTemperature}). */
  fixedTemperature?: FixedTemperature | undefined
  /** The client's api: its `providerTools` entry is added to the body's tools after this body is built. */
  api: string
}

/** The Chat Completions request body. */
export function chatBody(request: LLMRequest, messages: ChatMessage[], options: ChatBodyOptions) {
  const body: Record<string, unknown> = { model: options.model, messages, stream: true }
  if (options.includeUsage) body.stream_options = { include_usage: true }
  if (request.maxOutputTokens !== undefined) body[options.maxTokensField] = request.maxOutputTokens
  const temperature = sentTemperature(request, options.fixedTemperature)
  if (temperature !== undefined) body.temperature = temperature
  if (request.reasoning?.effort) body.reasoning_effort = request.reasoning.effort
  const declaresTools = request.tools !== undefined && request.tools.length > 0
  if (declaresTools) {
    body.tools = request.tools!.map((tool) => ({
      type: 'function',
      function: { name: tool.name, description: tool.description, parameters: tool.parameters },
    }))
  }
  const choice = sentToolChoice(
    request.toolChoice,
    declaresTools || declaresProviderTools(request, options.api),
  )
  if (choice !== undefined) body.tool_choice = chatToolChoice(choice)
  const format = request.responseFormat
  if (format) body.response_format = { type: 'json_schema', json_schema: jsonSchemaFormat(format) }
  return body
}

function chatToolChoice(choice: NonNullable<LLMRequest['toolChoice']>) {
  return typeof choice === 'string' ? choice : { type: 'function', function: { name: choice.name } }
}
