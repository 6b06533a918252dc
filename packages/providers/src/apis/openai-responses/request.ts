import type {
  AssistantMessage,
  DeveloperMessage,
  Message,
  ThinkingTextPart,
  ToolResultMessage,
  UserContentPart,
  UserMessage,
} from '@kode/protocol'
import type { FixedTemperature, LLMRequest } from '../../types.js'
import { type ImageFiles, imageUrlOf } from '../shared/images.js'
import { jsonSchemaFormat } from '../shared/json-schema-format.js'
import { MessageCache } from '../shared/message-cache.js'
import { MessagePreparer } from '../shared/message-preparer.js'
import type { ViewEntry } from '../shared/prepare-messages.js'
import { SettledItems, type WireItems } from '../shared/settled-items.js'
import { sentTemperature } from '../shared/temperature.js'
import { isOwnMessage, type Speaker, signatureFits } from '../shared/thinking.js'
import { sendableArguments } from '../shared/tool-arguments.js'
import { fitToolCallId, TOOL_CALL_ID_RULES } from '../shared/tool-call-ids.js'
import { declaresProviderTools, sentToolChoice } from '../shared/tool-choice.js'
import { ToolImageRun, toolImageContent } from '../shared/tool-images.js'

/** Responses input content (the subset Kode sends). */
export type ResponsesContent =
  | { type: 'input_text'; text: string }
  | { type: 'input_image'; image_url: string; detail: 'auto' }

/** Responses input items (the subset Kode sends). */
export type ResponsesInputItem =
  | { role: 'user'; content: ResponsesContent[] }
  | { role: 'assistant'; content: { type: 'output_text'; text: string }[]; id?: string; phase?: string }
  | {
      type: 'reasoning'
      id: string
      summary: { type: 'summary_text'; text: string }[]
      encrypted_content: string
    }
  | { type: 'function_call'; call_id: string; name: string; arguments: string; id?: string }
  | { type: 'function_call_output'; call_id: string; output: string }

/** The items an assistant message is replayed as. */
type ReplayItem = Exclude<ResponsesInputItem, { role: 'user' } | { type: 'function_call_output' }>

/** What the message mapping needs to know about the client. */
export interface ResponsesMessageOptions {
  speaker: Speaker
  /** Rendering of reasoning that cannot go back as a reasoning item; `undefined` drops it. */
  thinkingAsText: ((text: string) => string) | undefined
}

interface ConvertedTool {
  item: { type: 'function_call_output'; call_id: string; output: string }
  images: ResponsesContent[]
}

/**
 * Messages -> Responses `instructions` pieces and `input` items: developer messages
 * folded into the preceding user message or tool output, tool text from `outputText`, tool images
 * in a user message after the run of outputs, missing tool results synthesised. Assistant
 * messages are replayed as ordered reasoning / message / function_call items: this model's
 * reasoning as a reasoning item (its summaries, encrypted content and item id), and message and
 * function-call item ids only when the whole message came from this model and all its reasoning
 * went back (the API pairs those ids with their reasoning items). A reasoning item with no output
 * item after it in its message is left out (see `convertAssistant`). Reasoning from anything else
 * becomes text. Call ids are made to fit 64 characters. Conversions are cached per message object,
 * and the items made from a history's settled part are kept for its next request (`SettledItems`).
 */
export function createResponsesMessageMapper(options: ResponsesMessageOptions) {
  const preparer = new MessagePreparer()
  const settled = new SettledItems<ResponsesInputItem>()
  const users = new MessageCache<ResponsesContent[]>()
  // A user message's item, kept so that it is the same object (and JSON) on every request.
  const userItems = new MessageCache<ResponsesInputItem>()
  const tools = new MessageCache<ConvertedTool>()
  const assistants = new MessageCache<ReplayItem[]>()
  const cached = (m: Message) => users.has(m) || tools.has(m)

  return async function responsesInput(
    request: LLMRequest,
    readImageFile: ((path: string) => Promise<Uint8Array>) | undefined,
  ): Promise<{ instructions: string[]; input: WireItems<ResponsesInputItem> }> {
    const view = await preparer.prepare(request, { readImageFile, converted: cached })
    const files = view.files
    // A run of tool images ends where the settled entries do: a user or assistant entry follows.
    return { instructions: view.system, input: settled.items(view, (entries) => entryItems(entries, files)) }
  }

  function entryItems(entries: readonly ViewEntry[], files: ImageFiles): ResponsesInputItem[] {
    const input: ResponsesInputItem[] = []
    const contentOf = (m: UserMessage | DeveloperMessage) => users.get(m, (u) => convertUser(u, files))
    const images = new ToolImageRun<ResponsesContent>((content) => input.push({ role: 'user', content }))
    for (const entry of entries) {
      images.next(entry)
      switch (entry.role) {
        case 'user':
          input.push(
            entry.appended.length === 0
              ? userItems.get(entry.message, (m) => ({ role: 'user', content: contentOf(m) }))
              : { role: 'user', content: withAppended(contentOf(entry.message), entry, contentOf) },
          )
          break
        case 'tool': {
          const tool = tools.get(entry.message, (m) => convertTool(m, files))
          images.add(tool.images)
          let output = tool.item.output
          for (const part of entry.appended.flatMap(contentOf)) {
            if (part.type === 'input_text') output = output ? `${output}\n\n${part.text}` : part.text
            else images.add([part])
          }
          input.push(output === tool.item.output ? tool.item : { ...tool.item, output })
          break
        }
        case 'assistant':
          input.push(...assistants.get(entry.message, (m) => convertAssistant(m, options)))
          break
        default: {
          const unknown: never = entry
          throw new TypeError(`unknown entry ${JSON.stringify(unknown)}`)
        }
      }
    }
    images.end()
    return input
  }
}

function withAppended(
  own: ResponsesContent[],
  entry: Extract<ViewEntry, { role: 'user' }>,
  contentOf: (m: DeveloperMessage) => ResponsesContent[],
): ResponsesContent[] {
  return entry.appended.length === 0 ? own : [...own, ...entry.appended.flatMap(contentOf)]
}

function convertUser(message: UserMessage | DeveloperMessage, files: ImageFiles): ResponsesContent[] {
  return message.parts.map((part) => contentPart(part, files))
}

function contentPart(part: UserContentPart, files: ImageFiles): ResponsesContent {
  return part.type === 'text'
    ? { type: 'input_text', text: part.text }
    : // `detail: 'auto'` is what the API assumes without it; strict servers (vLLM) require the field.
      { type: 'input_image', image_url: imageUrlOf(part, files), detail: 'auto' }
}

function convertTool(message: ToolResultMessage, files: ImageFiles): ConvertedTool {
  const callId = fitToolCallId(message.toolCallId, TOOL_CALL_ID_RULES['openai-responses'])
  const images = toolImageContent<ResponsesContent>(message, callId, {
    text: (text) => ({ type: 'input_text', text }),
    image: (part) => contentPart(part, files),
  })
  return { item: { type: 'function_call_output', call_id: callId, output: message.outputText }, images }
}

function convertAssistant(message: AssistantMessage, options: ResponsesMessageOptions): ReplayItem[] {
  const model = options.speaker.model
  let items: ReplayItem[] = []
  /** Index of the last message or function_call item the response itself produced. */
  let lastOutput = -1
  // Reasoning text waiting to learn whether a reasoning item (a fitting signature) follows it.
  let pending: ThinkingTextPart[] = []
  let degraded = false
  const flushPending = () => {
    for (const part of pending) {
      degraded = true
      if (options.thinkingAsText && part.text) items.push(assistantText(options.thinkingAsText(part.text)))
    }
    pending = []
  }
  for (const part of message.parts) {
    switch (part.type) {
      case 'thinking_text':
        pending.push(part)
        break
      case 'thinking_signature':
        if (signatureFits(part, 'openai-responses', model) && part.itemId) {
          const summary = pending.map((p) => ({ type: 'summary_text' as const, text: p.text }))
          items.push({ type: 'reasoning', id: part.itemId, summary, encrypted_content: part.signature })
          pending = []
        } else {
          flushPending()
          degraded = true
        }
        break
      case 'text':
        flushPending()
        if (part.text) {
          const item = assistantText(part.text)
          if (part.itemId !== undefined) item.id = part.itemId
          if (part.phase !== undefined) item.phase = part.phase
          lastOutput = items.push(item) - 1
        }
        break
      case 'tool_call': {
        flushPending()
        const call: ReplayItem = {
          type: 'function_call',
          call_id: fitToolCallId(part.id, TOOL_CALL_ID_RULES['openai-responses']),
          name: part.name,
          arguments: sendableArguments(part.argumentsJson, part.incomplete),
        }
        if (part.itemId !== undefined) call.id = part.itemId
        lastOutput = items.push(call) - 1
        break
      }
      case 'image_url':
      case 'image_file':
        // Assistant messages carry no images on this wire.
        break
      case 'server_tool':
        // Another provider's server-side tool activity has no place here. This wire's own (a web
        // search) is kept for the transcript only: the message's text and citations carry what
        // the model found, and a stateless request has no stored item for it to refer to.
        break
      default: {
        const unknown: never = part
        throw new TypeError(`unknown part ${JSON.stringify(unknown)}`)
      }
    }
  }
  flushPending()
  // The API refuses a reasoning item not followed by the item it led to ("provided without its
  // required following item"): one after the response's last output item (a response cut off
  // right after its reasoning) led to nothing, and is left out. It is no item's reasoning, so the
  // output items before it keep their ids.
  if (items.length - 1 > lastOutput) items = items.filter((item, i) => i <= lastOutput || !isReasoning(item))
  // Item ids of another model's output, or of output whose reasoning did not go back, fail the
  // API's pairing check; without them the items are plain history. Phase is this model's own.
  const own = isOwnMessage(message, options.speaker)
  if (degraded || !own) for (const item of items) if (!isReasoning(item)) delete item.id
  if (!own) for (const item of items) if ('role' in item) delete item.phase
  return items
}

function isReasoning(item: ReplayItem): item is Extract<ReplayItem, { type: 'reasoning' }> {
  return 'type' in item && item.type === 'reasoning'
}

function assistantText(text: string): Extract<ResponsesInputItem, { role: 'assistant' }> {
  return { role: 'assistant', content: [{ type: 'output_text', text }] }
}

/** The API's floor for `max_output_tokens`: it answers a smaller one with a 400. */
const MIN_OUTPUT_TOKENS = 16

/** Options of the request body beyond the input. */
export interface ResponsesBodyOptions {
  model: string
  /** Let OpenAI keep the response (`store`). Default false: history is sent every turn. */
  store: boolean
  /** `include`, by default `['reasoning.encrypted_content']` so reasoning can go back. */
  include: readonly string[]
  /** The catalog's word on the model's temperature (see {@link sentTemperature}). */
  fixedTemperature?: FixedTemperature | undefined
  /** The client's api: its `providerTools` entry is added to the body's tools after this body is built. */
  api: string
}

/**
 * The Responses request body. `reasoning` asks for the effort (default `medium` when only a
 * budget is given; this api has no budgets) and for summaries (`summary: 'auto'`). A token limit
 * below the API's floor of 16 is raised to it.
 */
export function responsesBody(
  request: LLMRequest,
  mapped: { instructions: string[]; input: ResponsesInputItem[] },
  options: ResponsesBodyOptions,
) {
  const body: Record<string, unknown> = {
    model: options.model,
    input: mapped.input,
    stream: true,
    store: options.store,
  }
  if (options.include.length > 0) body.include = options.include
  if (mapped.instructions.length > 0) body.instructions = mapped.instructions.join('\n\n')
  if (request.maxOutputTokens !== undefined)
    body.max_output_tokens = Math.max(request.maxOutputTokens, MIN_OUTPUT_TOKENS)
  const temperature = sentTemperature(request, options.fixedTemperature)
  if (temperature !== undefined) body.temperature = temperature
  if (request.reasoning) body.reasoning = { effort: request.reasoning.effort ?? 'medium', summary: 'auto' }
  const declaresTools = request.tools !== undefined && request.tools.length > 0
  if (declaresTools) {
    body.tools = request.tools!.map((tool) => ({
      type: 'function',
      name: tool.name,
      description: tool.description,
      parameters: tool.parameters,
      strict: false,
    }))
  }
  const choice = sentToolChoice(
    request.toolChoice,
    declaresTools || declaresProviderTools(request, options.api),
  )
  if (choice !== undefined)
    body.tool_choice = typeof choice === 'string' ? choice : { type: 'function', name: choice.name }
  const format = request.responseFormat
  if (format) body.text = { format: { type: 'json_schema', ...jsonSchemaFormat(format) } }
  return body
}
