import type {
  AssistantMessage,
  DeveloperMessage,
  ImagePart,
  Message,
  ToolResultMessage,
  UserMessage,
} from '@kode/protocol'
import type { LLMRequest } from '../../types.js'
import { type ImageFiles, imageMediaType, imageUrlOf, parseDataUrl } from '../shared/images.js'
import { MessageCache } from '../shared/message-cache.js'
import { MessagePreparer } from '../shared/message-preparer.js'
import { EFFORT_BUDGET_TOKENS } from '../shared/reasoning.js'
import { SettledItems, type WireItems } from '../shared/settled-items.js'
import { signatureFits } from '../shared/thinking.js'
import { argumentsObject } from '../shared/tool-arguments.js'
import { fitToolCallId, TOOL_CALL_ID_RULES } from '../shared/tool-call-ids.js'
import { declaresProviderTools, sentToolChoice } from '../shared/tool-choice.js'
import { lastTurnStart, type Turn, type TurnConverters, userAssistantTurns } from '../shared/turns.js'
import { outputToolChoice, outputToolDeclaration, STRUCTURED_OUTPUT_TOOL } from './output-tool.js'

/** Anthropic Messages wire types (the subset Kode sends). */
export type CacheControl = { type: 'ephemeral'; ttl?: '5m' | '1h' }

export type AnthropicImageSource =
  | { type: 'base64'; media_type: string; data: string }
  | { type: 'url'; url: string }

export type AnthropicBlock =
  | { type: 'text'; text: string; cache_control?: CacheControl }
  | { type: 'image'; source: AnthropicImageSource; cache_control?: CacheControl }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown>; caller?: unknown }
  | {
      type: 'tool_result'
      tool_use_id: string
      content?: AnthropicBlock[]
      is_error?: boolean
      cache_control?: CacheControl
    }

export interface AnthropicMessage {
  role: 'user' | 'assistant'
  content: AnthropicBlock[]
}

/** What the message mapping needs to know about the client. */
export interface AnthropicMessageOptions {
  model: string
  /** Rendering of reasoning that cannot go back signed; `undefined` drops it. */
  thinkingAsText: ((text: string) => string) | undefined
}

/**
 * Messages -> Anthropic `system` and `messages`: developer messages folded into the
 * preceding user turn, tool results as `tool_result` blocks (text from `outputText`, images
 * inside), consecutive user content merged into one turn, text that is empty or only whitespace
 * left out (the API rejects such a block). Thinking goes back as signed `thinking`
 * (or `redacted_thinking`) blocks only to the model that signed it; otherwise it becomes text and
 * the signature is dropped. Conversions are cached per message object, and the turns made from a
 * history's settled part are kept for its next request (see `SettledItems`).
 */
export function createAnthropicMessageMapper(options: AnthropicMessageOptions) {
  const preparer = new MessagePreparer()
  const settled = new SettledItems<AnthropicMessage>()
  const users = new MessageCache<AnthropicBlock[]>()
  const tools = new MessageCache<AnthropicBlock>()
  const assistants = new MessageCache<AnthropicBlock[]>()
  const cached = (m: Message) => users.has(m) || tools.has(m)

  return async function anthropicMessages(
    request: LLMRequest,
    readImageFile: ((path: string) => Promise<Uint8Array>) | undefined,
  ): Promise<{ system: string[]; messages: WireItems<AnthropicMessage> }> {
    const view = await preparer.prepare(request, { readImageFile, converted: cached })
    const files = view.files
    const convert: TurnConverters<AnthropicBlock> = {
      user: (m) => users.get(m, (u) => convertUser(u, files)),
      tool: (m) => [tools.get(m, (t) => convertTool(t, files))],
      assistant: (m) => assistants.get(m, (a) => convertAssistant(a, options)),
    }
    const messages = settled.items(
      view,
      (entries) => userAssistantTurns({ entries }, convert).map(anthropicMessage),
      (entries, end) => lastTurnStart(entries, end, convert),
    )
    return { system: view.system, messages }
  }
}

function anthropicMessage(turn: Turn<AnthropicBlock>): AnthropicMessage {
  return { role: turn.role, content: turn.parts }
}

function convertUser(message: UserMessage | DeveloperMessage, files: ImageFiles): AnthropicBlock[] {
  const blocks: AnthropicBlock[] = []
  for (const part of message.parts) {
    if (part.type === 'text') {
      if (sendable(part.text)) blocks.push({ type: 'text', text: part.text })
    } else blocks.push(imageBlock(part, files))
  }
  return blocks
}

function convertTool(message: ToolResultMessage, files: ImageFiles): AnthropicBlock {
  const content: AnthropicBlock[] = []
  if (sendable(message.outputText)) content.push({ type: 'text', text: message.outputText })
  for (const part of message.parts) content.push(imageBlock(part, files))
  const block: AnthropicBlock = { type: 'tool_result', tool_use_id: toolUseId(message.toolCallId) }
  if (content.length > 0) block.content = content
  if (message.status !== 'success') block.is_error = true
  return block
}

/**
 * Whether a text block can be sent: the API rejects a text block that is empty or holds only
 * whitespace (a model's own `"\n\n"` before a tool call, a tool that printed a bare newline).
 */
function sendable(text: string): boolean {
  return text.trim() !== ''
}

function imageBlock(part: ImagePart, files: ImageFiles): AnthropicBlock {
  const url = imageUrlOf(part, files)
  const data = parseDataUrl(url)
  return {
    type: 'image',
    source: data
      ? { type: 'base64', media_type: imageMediaType(data.mimeType), data: data.data }
      : { type: 'url', url },
  }
}

function convertAssistant(message: AssistantMessage, options: AnthropicMessageOptions): AnthropicBlock[] {
  const blocks: AnthropicBlock[] = []
  const parts = message.parts
  const fits = (i: number) => {
    const part = parts[i]
    return part?.type === 'thinking_signature' && signatureFits(part, 'anthropic', options.model)
      ? part
      : undefined
  }
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!
    switch (part.type) {
      case 'text':
        if (sendable(part.text)) blocks.push({ type: 'text', text: part.text })
        break
      case 'thinking_text': {
        const signed = fits(i + 1)
        if (signed && !signed.redacted) {
          blocks.push({ type: 'thinking', thinking: part.text, signature: signed.signature })
          i++
        } else if (options.thinkingAsText && part.text) {
          blocks.push({ type: 'text', text: options.thinkingAsText(part.text) })
        }
        break
      }
      case 'thinking_signature': {
        const signed = fits(i)
        if (signed?.redacted) blocks.push({ type: 'redacted_thinking', data: signed.signature })
        else if (signed) blocks.push({ type: 'thinking', thinking: '', signature: signed.signature })
        break
      }
      case 'tool_call': {
        // The block's other fields (a programmatic call's `caller`) go back as they came.
        const kept = part.providerFields?.format === 'anthropic' ? part.providerFields.fields : undefined
        blocks.push({
          ...kept,
          type: 'tool_use',
          id: toolUseId(part.id),
          name: part.name,
          input: argumentsObject(part.argumentsJson, part.incomplete),
        })
        break
      }
      case 'image_url':
      case 'image_file':
        // Assistant turns cannot carry images on this wire.
        break
      case 'server_tool':
        // Anthropic's own server-tool blocks go back exactly as they came; another wire's are left out.
        if (part.format === 'anthropic') blocks.push(part.block as AnthropicBlock)
        break
      default: {
        const unknown: never = part
        throw new TypeError(`unknown part ${JSON.stringify(unknown)}`)
      }
    }
  }
  return blocks
}

/** Ids from other providers made to fit `^[a-zA-Z0-9_-]{1,64}$`; results are rewritten the same way. */
function toolUseId(id: string): string {
  return fitToolCallId(id, TOOL_CALL_ID_RULES.anthropic)
}

const MIN_THINKING_BUDGET = 1_024

/** Options of the request body beyond the messages. */
export interface AnthropicBodyOptions {
  model: string
  /** `max_tokens` when the request sets none (the catalog's max output, else 4,096). */
  defaultMaxTokens: number
  cacheControl: CacheControl | undefined
  /** The client's api: its `providerTools` entry is added to the body's tools after this body is built. */
  api: string
}

/**
 * The Messages request body. Reasoning becomes `thinking` with a budget (`budgetTokens`, else by
 * effort), kept below `max_tokens`; below Anthropic's minimum of 1,024 it is left off, as it is
 * with a tool choice that forces a call (the API allows only `auto` and `none` with thinking) and
 * while a tool loop goes on whose assistant turn does not start with thinking (see
 * `startsWithThinking`). Prompt
 * caching marks the system prompt, the last tool and the last user turn. A structured-output
 * request adds the answer tool after the host's tools (see `outputToolChoice` for how it is chosen).
 * The last response's code-execution `container`, when it had one, is named again (`container`).
 */
export function anthropicBody(
  request: LLMRequest,
  mapped: { system: string[]; messages: AnthropicMessage[] },
  options: AnthropicBodyOptions,
) {
  const maxTokens = request.maxOutputTokens ?? options.defaultMaxTokens
  const cache = options.cacheControl
  const body: Record<string, unknown> = {
    model: options.model,
    max_tokens: maxTokens,
    messages: cache ? markLastUserTurn(mapped.messages, cache) : mapped.messages,
    stream: true,
  }
  const pieces = mapped.system.filter(sendable)
  if (pieces.length > 0) {
    const system: AnthropicBlock[] = pieces.map((text) => ({ type: 'text', text }))
    if (cache)
      system[system.length - 1] = {
        ...(system[system.length - 1] as { type: 'text'; text: string }),
        cache_control: cache,
      }
    body.system = system
  }
  const format = request.responseFormat
  const tools: Record<string, unknown>[] = (request.tools ?? []).map((tool) => ({
    name: tool.name,
    description: tool.description,
    input_schema: tool.parameters,
  }))
  const otherTools = tools.length > 0
  if (format) {
    if (request.tools?.some((tool) => tool.name === STRUCTURED_OUTPUT_TOOL))
      throw new TypeError(`a tool is named ${STRUCTURED_OUTPUT_TOOL}, the name structured output uses`)
    tools.push(outputToolDeclaration(format))
  }
  if (tools.length > 0) {
    if (cache) tools[tools.length - 1] = { ...tools[tools.length - 1], cache_control: cache }
    body.tools = tools
  }
  // The tools the provider runs (web search, ...) are declared too, once this body is built.
  const serverTools = declaresProviderTools(request, options.api)
  const choice = sentToolChoice(request.toolChoice, tools.length > 0 || serverTools)
  if (tools.length === 0 && choice === undefined) {
    // The API refuses tool blocks in a request that declares no tools: the tools the history
    // called are named, and may not be called (an agent whose tools were taken away, say). With
    // server tools declared, `none` would keep the model from them too: the stand-ins say they
    // are not available, and a call of one is answered as a call of an unknown tool.
    const called = calledTools(mapped.messages)
    if (called.length > 0) {
      body.tools = called.map(unavailableTool)
      if (!serverTools) body.tool_choice = { type: 'none' }
    }
  }
  // Thinking allows only `auto` and `none`: a forced tool choice wins over reasoning.
  const forced = choice !== undefined && choice !== 'auto' && choice !== 'none'
  const budget =
    !forced && startsWithThinking(mapped.messages) ? thinkingBudget(request.reasoning, maxTokens) : undefined
  if (choice !== undefined) body.tool_choice = anthropicToolChoice(choice)
  else if (format) body.tool_choice = outputToolChoice(otherTools, budget !== undefined)
  if (budget !== undefined) body.thinking = { type: 'enabled', budget_tokens: budget }
  // Anthropic's range is 0 to 1 (OpenAI's and Gemini's go to 2): a higher one is a 400 there.
  else if (request.temperature !== undefined) body.temperature = Math.min(request.temperature, 1)
  const container = containerOf(request.messages)
  if (container !== undefined) body.container = container
  return body
}

/**
 * The id of the container the last response ran in, when it came from this wire: a response whose
 * code called client tools is answered in the same container (the API refuses it otherwise).
 */
function containerOf(messages: LLMRequest['messages']): string | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!
    if (message.role !== 'assistant') continue
    const fields = message.providerFields
    if (fields?.format !== 'anthropic') return undefined
    const container = fields.fields.container as { id?: unknown } | null | undefined
    return typeof container?.id === 'string' && container.id !== '' ? container.id : undefined
  }
  return undefined
}

/**
 * Whether the request may turn thinking on. With thinking on, the API requires the last assistant
 * turn, when it called tools whose results this request carries, to start with a `thinking` or
 * `redacted_thinking` block (a tool loop keeps one thinking mode from start to end). A turn made by
 * another model or API, or by this one with thinking off, has none to start it: thinking stays off
 * until the loop ends, as the API's own error advises.
 */
function startsWithThinking(messages: readonly AnthropicMessage[]): boolean {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!
    if (message.role !== 'assistant') continue
    if (!message.content.some((block) => block.type === 'tool_use')) return true
    const first = message.content[0]!.type
    return first === 'thinking' || first === 'redacted_thinking'
  }
  return true
}

function thinkingBudget(reasoning: LLMRequest['reasoning'], maxTokens: number): number | undefined {
  if (!reasoning) return undefined
  const wanted = reasoning.budgetTokens ?? EFFORT_BUDGET_TOKENS[reasoning.effort ?? 'medium']
  const budget = Math.min(wanted, maxTokens - 1)
  return budget >= MIN_THINKING_BUDGET ? budget : undefined
}

/** The names of the tools the history's assistant turns called, each once, in order. */
function calledTools(messages: readonly AnthropicMessage[]): string[] {
  const names = new Set<string>()
  for (const message of messages) {
    if (message.role !== 'assistant') continue
    for (const block of message.content) if (block.type === 'tool_use') names.add(block.name)
  }
  return [...names]
}

/** A tool the history called that the request does not offer: declared so its blocks may be sent. */
function unavailableTool(name: string) {
  return {
    name,
    description: 'Called earlier in this conversation; not available now.',
    input_schema: { type: 'object' },
  }
}

function anthropicToolChoice(choice: NonNullable<LLMRequest['toolChoice']>) {
  if (typeof choice !== 'string') return { type: 'tool', name: choice.name }
  return { type: choice === 'required' ? 'any' : choice }
}

/** A copy of `messages` whose last user turn ends with a cache breakpoint (cached blocks untouched). */
function markLastUserTurn(messages: AnthropicMessage[], cache: CacheControl): AnthropicMessage[] {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!
    if (message.role !== 'user') continue
    const content = [...message.content]
    const last = content[content.length - 1]!
    if (last.type === 'text' || last.type === 'image' || last.type === 'tool_result') {
      content[content.length - 1] = { ...last, cache_control: cache }
    }
    const out = [...messages]
    out[i] = { role: 'user', content }
    return out
  }
  return messages
}
