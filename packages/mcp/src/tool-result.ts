import type { ToolOutput } from '@kode/core'
import type { ImagePart } from '@kode/protocol'
import { isRecord } from './is-record.js'
import { MAX_NESTING, nestsDeeperThan } from './nesting.js'

/** One content block of a `tools/call` result, as far as we read it; unknown types are tolerated. */
type Content =
  | { type: 'text'; text: string }
  | { type: 'image'; data: string; mimeType: string }
  | { type: 'audio'; data: string; mimeType: string }
  | { type: 'resource_link'; uri: string; name?: string; description?: string }
  | { type: 'resource'; resource: { uri: string; mimeType?: string; text?: string; blob?: string } }
  | { type: string; [key: string]: unknown }

/** A `tools/call` result: current (`content`) or the 2024-10-07 form (`toolResult`). */
export interface CallResult {
  /** Blocks as the server sent them: those that are not one (no `type`) are noted as malformed. */
  content?: readonly unknown[]
  structuredContent?: unknown
  isError?: boolean
  toolResult?: unknown
  [key: string]: unknown
}

/**
 * Maps a `tools/call` result to a Kode tool output: text blocks joined (one per line) into
 * `outputText`, PNG, JPEG and WebP images as image parts (data URLs), what the model cannot take
 * (audio, other images, binary resources but images and text, unknown blocks) as a one-line note, `isError` as an
 * `error` result, structured content kept in `uiExtra` when its JSON is at most
 * `STRUCTURED_CONTENT_LIMIT` characters and nests at most `MAX_NESTING` levels (and as the text
 * when the server sent no text).
 */
export function toToolOutput(result: CallResult): ToolOutput {
  const texts: string[] = []
  const parts: ImagePart[] = []
  // The SDK fills in an empty `content` for the older form, so an empty one does not rule it out.
  const noContent = !Array.isArray(result.content) || result.content.length === 0
  if (noContent && 'toolResult' in result) texts.push(stringify(result.toolResult))
  for (const block of result.content ?? []) {
    const text = isBlock(block) ? describeBlock(block, parts) : '[a content block the server sent malformed]'
    if (text !== undefined) texts.push(text)
  }
  const output: ToolOutput = { outputText: texts.join('\n') }
  if (result.structuredContent !== undefined) {
    // Nested without end, it could not be written to the history (see `MAX_NESTING`).
    const json = nestsDeeperThan(result.structuredContent, MAX_NESTING)
      ? undefined
      : stringify(result.structuredContent)
    // Kept for UIs, not read by the model, and not capped by the agent's `toolOutputLimit`: a whole
    // file (or an image's data again, as `server-filesystem` sends) would be stored in the history
    // on every call.
    if (json !== undefined && json.length <= STRUCTURED_CONTENT_LIMIT) {
      output.uiExtra = { type: 'json', value: result.structuredContent }
    }
    if (texts.length === 0) {
      output.outputText = json ?? `[structured content omitted: it nests over ${MAX_NESTING} levels deep]`
    }
  }
  if (parts.length > 0) output.parts = parts
  if (result.isError === true) output.status = 'error'
  return output
}

/** Whether a content block has the one field every block has: an object with a string `type`. */
function isBlock(block: unknown): block is Content {
  return isRecord(block) && typeof block.type === 'string'
}

/** The text a block adds (`undefined` for none); an image is pushed to `parts` instead. */
function describeBlock(block: Content, parts: ImagePart[]): string | undefined {
  switch (block.type) {
    case 'text':
      return typeof block.text === 'string' ? block.text : undefined
    case 'image': {
      const { data, mimeType } = block as { data: unknown; mimeType: unknown }
      if (typeof data !== 'string' || typeof mimeType !== 'string')
        return '[an image the server sent malformed]'
      return describeImage(data, mimeType, parts)
    }
    case 'audio':
      return `[audio (${String((block as { mimeType?: unknown }).mimeType)}) omitted]`
    case 'resource_link': {
      const { uri, name } = block as { uri?: unknown; name?: unknown }
      return `[resource ${typeof name === 'string' ? `${name}: ` : ''}${String(uri)}]`
    }
    case 'resource': {
      const resource = (
        block as { resource?: { uri?: unknown; text?: unknown; blob?: unknown; mimeType?: unknown } }
      ).resource
      const uri = String(resource?.uri)
      if (typeof resource?.text === 'string') return `[resource ${uri}]\n${resource.text}`
      const { blob, mimeType } = resource ?? {}
      // A binary resource that is an image the model can see, or text sent as bytes, is read.
      if (typeof blob === 'string' && typeof mimeType === 'string') {
        if (modelImageType(mimeType) !== undefined) return describeImage(blob, mimeType, parts)
        if (isTextType(mimeType)) return `[resource ${uri}]\n${Buffer.from(blob, 'base64').toString('utf8')}`
      }
      return `[binary resource ${uri} (${String(mimeType ?? 'unknown type')}) omitted]`
    }
    default:
      return `[${String(block.type)} content omitted]`
  }
}

/** An image's data as an image part, or the note that says why the model is not shown it. */
function describeImage(data: string, mimeType: string, parts: ImagePart[]): string | undefined {
  const type = modelImageType(mimeType)
  // Kept in the history, an image the model's API refuses would fail this and every later request.
  if (type === undefined) return `[image (${mimeType}) omitted: models take PNG, JPEG and WebP images]`
  if (data.length > IMAGE_DATA_LIMIT) {
    const mb = (data.length / 1024 / 1024).toFixed(1)
    return `[image (${mimeType}, ${mb} MB as base64) omitted: models take images up to 5 MB]`
  }
  parts.push({ type: 'image_url', url: `data:${type};base64,${data}` })
  return undefined
}

/** Whether a resource of `mimeType` is text: `text/*`, JSON, XML, YAML, JavaScript and their `+json`, `+xml` kin. */
function isTextType(mimeType: string): boolean {
  const essence = mimeType.split(';')[0]!.trim().toLowerCase()
  return (
    essence.startsWith('text/') ||
    /^application\/(json|xml|yaml|x-yaml|javascript|ecmascript|x-sh|sql|graphql|toml)$/.test(essence) ||
    /^application\/[^/]+\+(json|xml|yaml)$/.test(essence)
  )
}

/**
 * The largest image data (base64 characters) every provider's API takes: Anthropic refuses an image
 * whose base64 form is over 5 MiB, and kept in the history it would fail every later request.
 */
export const IMAGE_DATA_LIMIT = 5 * 1024 * 1024

/** The longest structured content (characters of its JSON) kept in a result's `uiExtra`. */
export const STRUCTURED_CONTENT_LIMIT = 256 * 1024

/**
 * The image types every provider's API takes, by the names they take them under. Not GIF: Gemini
 * does not list it, and OpenAI refuses an animated one.
 */
const MODEL_IMAGE_TYPES: Readonly<Record<string, string>> = {
  'image/png': 'image/png',
  'image/jpeg': 'image/jpeg',
  'image/jpg': 'image/jpeg',
  'image/webp': 'image/webp',
}

/** `mimeType` as models take it (`image/JPG` is `image/jpeg`), or `undefined` for a type they refuse. */
function modelImageType(mimeType: string): string | undefined {
  const essence = mimeType.split(';')[0]!.trim().toLowerCase()
  return Object.hasOwn(MODEL_IMAGE_TYPES, essence) ? MODEL_IMAGE_TYPES[essence] : undefined
}

function stringify(value: unknown): string {
  if (typeof value === 'string') return value
  try {
    return JSON.stringify(value) ?? String(value)
  } catch {
    return String(value)
  }
}
