import type { ImageFilePart, ImagePart, Message } from '@kode/protocol'
import { ProviderError } from '../../transport/errors.js'

/**
 * A `data:<mime>;base64,<data>` URL taken apart; `undefined` for any other URL. Parameters between
 * the type and `;base64` (`;name=cat.png`, `;charset=...`, as RFC 2397 allows) are dropped: sent as
 * a URL instead, such an image would be refused by the APIs that take only base64 data.
 */
export function parseDataUrl(url: string): { mimeType: string; data: string } | undefined {
  const match = /^data:([^;,]+)(?:;[^;,]*)*?;base64,(.*)$/s.exec(url)
  return match ? { mimeType: match[1]!, data: match[2]! } : undefined
}

/**
 * An image media type as the APIs that check it want it written: Anthropic takes `image/jpeg`,
 * `image/png`, `image/gif` and `image/webp`, Gemini `image/png`, `image/jpeg`, `image/webp`,
 * `image/heic` and `image/heif`, both lower-case only, and both answer 400 to `image/jpg` (a common
 * misnaming). Such a type goes as its name there; any other goes as given, and the API's error
 * names it.
 */
export function imageMediaType(mimeType: string): string {
  const lower = mimeType.toLowerCase()
  return lower === 'image/jpg' ? 'image/jpeg' : lower
}

/** Base64 of bytes without Node's Buffer, so it runs in any host. */
export function toBase64(bytes: Uint8Array): string {
  let binary = ''
  const step = 0x8000
  for (let i = 0; i < bytes.length; i += step) {
    binary += String.fromCharCode(...bytes.subarray(i, i + step))
  }
  return btoa(binary)
}

/** Image file part -> data URL, for the messages of one request. */
export type ImageFiles = ReadonlyMap<ImageFilePart, string>

/**
 * Reads the `image_file` parts of `messages` (skipping those `skip` says are already converted)
 * through the host's reader, in parallel, into data URLs. Fails with `invalid_request` when there is
 * no reader or a file cannot be read.
 */
export async function readImageFiles(
  messages: readonly Message[],
  skip: (message: Message) => boolean,
  reader: ((path: string) => Promise<Uint8Array>) | undefined,
): Promise<ImageFiles> {
  const files: ImageFilePart[] = []
  for (const message of messages) {
    if (skip(message) || !holdsImageFiles(message)) continue
    for (const part of message.parts) if (part.type === 'image_file') files.push(part)
  }
  const out = new Map<ImageFilePart, string>()
  if (files.length === 0) return out
  if (!reader) {
    throw new ProviderError(
      `the request holds an image file (${files[0]!.path}) but the client has no readImageFile`,
      { code: 'invalid_request', retryable: false },
    )
  }
  await Promise.all(
    files.map(async (part) => {
      try {
        out.set(part, `data:${part.mimeType};base64,${toBase64(await reader(part.path))}`)
      } catch (cause) {
        throw new ProviderError(`could not read image file ${part.path}`, {
          code: 'invalid_request',
          retryable: false,
          cause,
        })
      }
    }),
  )
  return out
}

/** Whether a request reads image files for `message`: a user, developer or tool message holding one. */
export function holdsImageFiles(message: Message): boolean {
  if (message.role === 'system' || message.role === 'assistant') return false
  return message.parts.some((part) => part.type === 'image_file')
}

/** The URL to send for an image part: http(s) and data URLs as they are, files as data URLs. */
export function imageUrlOf(part: ImagePart, files: ImageFiles): string {
  if (part.type === 'image_url') return part.url
  const url = files.get(part)
  if (url === undefined) throw new Error(`image file ${part.path} was not read`)
  return url
}
