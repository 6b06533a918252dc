import type {
  AssistantMessage,
  DeveloperMessage,
  ImagePart,
  Message,
  ToolResultMessage,
  UserMessage,
} from '@kode/protocol'
import type { LLMRequest, ReasoningControl } from '../../types.js'
import { type ImageFiles, imageMediaType, imageUrlOf, parseDataUrl } from '../shared/images.js'
import { MessageCache } from '../shared/message-cache.js'
import { MessagePreparer } from '../shared/message-preparer.js'
import { EFFORT_BUDGET_TOKENS, nearestLevel } from '../shared/reasoning.js'
import { SettledItems, type WireItems } from '../shared/settled-items.js'
import { isOwnMessage, type Speaker, signatureFits } from '../shared/thinking.js'
import { argumentsObject } from '../shared/tool-arguments.js'
import { sentToolChoice } from '../shared/tool-choice.js'
import { lastTurnStart, type Turn, type TurnConverters, userAssistantTurns } from '../shared/turns.js'
import { googleCallId, ResultCallIds } from './call-ids.js'
import { type CodeExecutionPart, codeExecutionPart } from './code-execution.js'
import { type GoogleFileData, imageFileData } from './file-data.js'

/** Gemini `Content` parts (the subset Kode sends). */
export type GooglePart =
  | { text: string; thought?: true; thoughtSignature?: string }
  | { inlineData: { mimeType: string; data: string }; thoughtSignature?: string }
  | { fileData: GoogleFileData; thoughtSignature?: string }
  | {
      functionCall: { id?: string; name: string; args: Record<string, unknown> }
      thoughtSignature?: string
    }
  | {
      functionResponse: {
        id?: string
        name: string
        response: { output: string } | { error: string }
        parts?: FunctionResponseMedia[]
      }
    }
  | (CodeExecutionPart & { thoughtSignature?: string })

/** Media inside a `functionResponse` (Gemini 3's multimodal function responses). */
export interface FunctionResponseMedia {
  inlineData: { mimeType: string; data: string }
}

export interface GoogleContent {
  role: 'user' | 'model'
  parts: GooglePart[]
}

/**
 * Google's documented stand-in signature for a function call the model did not produce itself
 * (another provider's history). Gemini 3 answers 400 to a turn whose first function call has none.
 */
export const FOREIGN_CALL_SIGNATURE = 'skip_thought_signature_validator'

/** What the message mapping needs to know about the client. */
export interface GoogleMessageOptions {
  speaker: Speaker
  /** Rendering of reasoning that cannot go back as a thought; `undefined` drops it. */
  thinkingAsText: ((text: string) => string) | undefined
  /** The model takes a tool result's images inside its `functionResponse` (Gemini 3). */
  imagesInToolResults: boolean
}

/**
 * Messages -> Gemini `systemInstruction` pieces and `contents`: developer messages
 * folded into the preceding user turn, tool results as `functionResponse` parts (`{ output }`, or
 * `{ error }` when the tool failed) with their images (inside, for a model that takes them there;
 * else after), consecutive user content merged into
 * one turn. A Gemini `thoughtSignature` goes back on the part it came with, only to the model that
 * made it; thinking from any other model becomes text. A call Gemini gave an id gets it back, on
 * its `functionCall` and on its `functionResponse`; no other id is sent (Gemini pairs those by order
 * and name). Conversions are cached per message object, and the turns
 * made from a history's settled part are kept for its next request (see `SettledItems`).
 */
export function createGoogleMessageMapper(options: GoogleMessageOptions) {
  const preparer = new MessagePreparer()
  const settled = new SettledItems<GoogleContent>()
  const users = new MessageCache<GooglePart[]>()
  const tools = new MessageCache<GooglePart[]>()
  const assistants = new MessageCache<GooglePart[]>()
  const cached = (m: Message) => users.has(m) || tools.has(m)

  return async function googleMessages(
    request: LLMRequest,
    readImageFile: ((path: string) => Promise<Uint8Array>) | undefined,
  ): Promise<{ system: string[]; contents: WireItems<GoogleContent> }> {
    const view = await preparer.prepare(request, { readImageFile, converted: cached })
    const files = view.files
    // Scans nothing until a result not converted before asks for its call's id.
    const callIds = new ResultCallIds(view.entries)
    const convert: TurnConverters<GooglePart> = {
      user: (m) => users.get(m, (u) => convertUser(u, files)),
      tool: (m) => tools.get(m, (t) => convertTool(t, files, callIds.of(t), options.imagesInToolResults)),
      assistant: (m) => assistants.get(m, (a) => convertAssistant(a, options)),
    }
    const contents = settled.items(
      view,
      (entries) => userAssistantTurns({ entries }, convert).map(googleContent),
      (entries, end) => lastTurnStart(entries, end, convert),
    )
    return { system: view.system, contents }
  }
}

function googleContent(turn: Turn<GooglePart>): GoogleContent {
  return { role: turn.role === 'assistant' ? 'model' : 'user', parts: turn.parts }
}

function convertUser(message: UserMessage | DeveloperMessage, files: ImageFiles): GooglePart[] {
  const parts: GooglePart[] = []
  for (const part of message.parts) {
    if (part.type === 'text') {
      if (part.text) parts.push({ text: part.text })
    } else parts.push(imagePart(part, files))
  }
  return parts
}

/**
 * A tool result: its `functionResponse`, then its images. With `inside` (Gemini 3), the images
 * Gemini documents for a function response (PNG, JPEG, WebP, sent inline) go in its `parts`; the
 * others (a GIF, an image by URL) still go after it.
 */
function convertTool(
  message: ToolResultMessage,
  files: ImageFiles,
  callId: string | undefined,
  inside: boolean,
): GooglePart[] {
  const text = message.outputText
  const response = message.status === 'success' ? { output: text } : { error: text }
  const name = message.toolName
  const functionResponse: Extract<GooglePart, { functionResponse: unknown }>['functionResponse'] =
    callId === undefined ? { name, response } : { id: callId, name, response }
  const parts: GooglePart[] = [{ functionResponse }]
  const media: FunctionResponseMedia[] = []
  for (const part of message.parts) {
    const image = imagePart(part, files)
    if (inside && 'inlineData' in image && FUNCTION_RESPONSE_TYPES.has(image.inlineData.mimeType))
      media.push({ inlineData: image.inlineData })
    else parts.push(image)
  }
  if (media.length > 0) functionResponse.parts = media
  return parts
}

/** The image types Gemini documents for a function response's `parts`. */
const FUNCTION_RESPONSE_TYPES: ReadonlySet<string> = new Set(['image/png', 'image/jpeg', 'image/webp'])

function imagePart(part: ImagePart, files: ImageFiles): GooglePart {
  const url = imageUrlOf(part, files)
  const data = parseDataUrl(url)
  return data
    ? { inlineData: { mimeType: imageMediaType(data.mimeType), data: data.data } }
    : { fileData: imageFileData(url) }
}

const NO_FILES: ImageFiles = new Map()

function convertAssistant(message: AssistantMessage, options: GoogleMessageOptions): GooglePart[] {
  const model = options.speaker.model
  const own = isOwnMessage(message, options.speaker)
  const out: GooglePart[] = []
  const parts = message.parts
  let signedCall = false
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!
    // The signature of this part, if it is one this model can read; it is consumed with the part.
    const next = parts[i + 1]
    const signature =
      next?.type === 'thinking_signature' && signatureFits(next, 'google', model) ? next : undefined
    const signed = <P extends GooglePart>(wire: P): P => {
      if (!signature) return wire
      i++
      return { ...wire, thoughtSignature: signature.signature }
    }
    switch (part.type) {
      case 'text':
        if (part.text || signature) out.push(signed({ text: part.text }))
        break
      case 'thinking_text':
        if (signature || (own && part.text)) out.push(signed({ text: part.text, thought: true as const }))
        else if (options.thinkingAsText && part.text) out.push({ text: options.thinkingAsText(part.text) })
        break
      case 'tool_call': {
        const id = googleCallId(part)
        const args = argumentsObject(part.argumentsJson, part.incomplete)
        const call = {
          functionCall: id === undefined ? { name: part.name, args } : { id, name: part.name, args },
        }
        if (signature) {
          out.push(signed(call))
          signedCall = true
        } else if (!signedCall) {
          // Gemini signs only the first call of a parallel batch; the others legitimately have none.
          out.push({ ...call, thoughtSignature: FOREIGN_CALL_SIGNATURE })
          signedCall = true
        } else out.push(call)
        break
      }
      case 'thinking_signature':
        // A signature no part claimed (another format or model, or nothing before it to carry it).
        break
      case 'image_url':
        // Image output can be signed too; it goes back with its signature.
        out.push(signed(imagePart(part, NO_FILES)))
        break
      case 'image_file':
        // Assistant image files are not read back; the model saw them when it made them.
        break
      case 'server_tool': {
        // Gemini's own code execution goes back as it came; another format's activity has no place here.
        const wire = part.format === 'google' ? codeExecutionPart(part.block) : undefined
        if (wire) out.push(signed(wire))
        break
      }
      default: {
        const unknown: never = part
        throw new TypeError(`unknown part ${JSON.stringify(unknown)}`)
      }
    }
  }
  return out
}

/**
 * The `generateContent` request body. Tools are declared with `parametersJsonSchema` (full JSON
 * Schema, as TypeBox produces it). Reasoning asks for thought summaries (`includeThoughts`) and is
 * sized the way the model takes it (`control`, from the catalog; see {@link thinkingConfig}).
 */
export function googleBody(
  request: LLMRequest,
  mapped: { system: string[]; contents: GoogleContent[] },
  control?: ReasoningControl,
) {
  const body: Record<string, unknown> = { contents: mapped.contents }
  if (mapped.system.length > 0) body.systemInstruction = { parts: mapped.system.map((text) => ({ text })) }
  const declaresTools = request.tools !== undefined && request.tools.length > 0
  if (declaresTools) {
    body.tools = [
      {
        functionDeclarations: request.tools!.map((tool) => ({
          name: tool.name,
          description: tool.description,
          parametersJsonSchema: tool.parameters,
        })),
      },
    ]
  }
  const choice = sentToolChoice(request.toolChoice, declaresTools)
  if (choice !== undefined) body.toolConfig = { functionCallingConfig: callingConfig(choice) }
  const generation: Record<string, unknown> = {}
  if (request.maxOutputTokens !== undefined) generation.maxOutputTokens = request.maxOutputTokens
  if (request.temperature !== undefined) generation.temperature = request.temperature
  if (request.reasoning) generation.thinkingConfig = thinkingConfig(request.reasoning, control)
  if (request.responseFormat) {
    generation.responseMimeType = 'application/json'
    generation.responseJsonSchema = request.responseFormat.schema
  }
  if (Object.keys(generation).length > 0) body.generationConfig = generation
  return body
}

/**
 * `thinkingConfig` for the model's way of sizing reasoning; the wrong field is a 400.
 * - Levels (Gemini 3): an effort goes as `thinkingLevel`, moved up to a level the model has
 *   (Gemini 3 Pro: `minimal` -> `low`, `medium` -> `high`). A budget goes as `thinkingBudget`,
 *   which Gemini 3 still accepts.
 * - Budget (Gemini 2.5): a budget, or an effort's budget (1,024 / 4,096 / 10,000 / 32,000
 *   tokens), goes as `thinkingBudget`, clamped to the model's range.
 * - Unknown (no catalog entry says): a budget as `thinkingBudget`, an effort as `thinkingLevel`.
 */
function thinkingConfig(
  reasoning: NonNullable<LLMRequest['reasoning']>,
  control: ReasoningControl | undefined,
): Record<string, unknown> {
  const thinking: Record<string, unknown> = { includeThoughts: true }
  const { effort, budgetTokens } = reasoning
  switch (control?.type) {
    case undefined:
      if (budgetTokens !== undefined) thinking.thinkingBudget = budgetTokens
      else if (effort) thinking.thinkingLevel = effort
      return thinking
    case 'levels':
      if (budgetTokens !== undefined) thinking.thinkingBudget = budgetTokens
      else if (effort) thinking.thinkingLevel = nearestLevel(effort, control.levels)
      return thinking
    case 'budget': {
      const wanted = budgetTokens ?? (effort ? EFFORT_BUDGET_TOKENS[effort] : undefined)
      if (wanted !== undefined) thinking.thinkingBudget = Math.min(control.max, Math.max(control.min, wanted))
      return thinking
    }
    default: {
      const unknown: never = control
      throw new TypeError(`unknown reasoning control ${JSON.stringify(unknown)}`)
    }
  }
}

function callingConfig(choice: NonNullable<LLMRequest['toolChoice']>) {
  if (typeof choice !== 'string') return { mode: 'ANY', allowedFunctionNames: [choice.name] }
  return { mode: choice === 'required' ? 'ANY' : choice.toUpperCase() }
}
