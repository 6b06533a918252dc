/**
 * How much of a body Kode reads when it only needs to quote it: an error response (non-2xx) or a
 * 200 that is not an event stream. The rest is not downloaded.
 */
export const MAX_QUOTED_BODY_BYTES = 64 * 1024

/** The start of a body, and whether there was more. */
export interface BodyHead {
  text: string
  /** The body went on past the bytes read (it was cancelled there). */
  truncated: boolean
  /** The body failed before its end (a cut connection, a stall): `text` is what arrived. */
  broken?: boolean
}

/**
 * Reads at most `maxBytes` of `response`'s body as UTF-8 and cancels the rest, so a huge or
 * endless body costs at most `maxBytes` of memory. A body that fails midway gives what arrived.
 * `onBytes` runs as each piece arrives (the idle watchdog counts it as data).
 */
export async function readBodyHead(
  response: Response,
  maxBytes = MAX_QUOTED_BODY_BYTES,
  onBytes?: () => void,
): Promise<BodyHead> {
  const body = response.body
  if (!body) return { text: '', truncated: false }
  const reader = body.getReader()
  const decoder = new TextDecoder()
  let text = ''
  let read = 0
  try {
    for (;;) {
      const chunk = await reader.read()
      if (chunk.done) return { text: text + decoder.decode(), truncated: false }
      onBytes?.()
      const room = maxBytes - read
      if (chunk.value.length > room) {
        text += decoder.decode(chunk.value.subarray(0, room))
        await reader.cancel().catch(() => undefined)
        return { text, truncated: true }
      }
      read += chunk.value.length
      text += decoder.decode(chunk.value, { stream: true })
    }
  } catch {
    return { text: text + decoder.decode(), truncated: false, broken: true }
  }
}

/** What the first bytes of a 200 body show it is, when it is not an event stream. */
export type NotAStream = 'a page' | 'a JSON document'

/**
 * What the first bytes of a 200 body are when they are not an event stream: an event stream
 * starts with a field, a comment or a blank line; a page (a captive portal, a proxy's error page
 * sent as 200) with `<`; a JSON document (an error some servers answer a streaming request with,
 * without `data:`) with `{`. `false` for a stream, `undefined` until a byte other than whitespace
 * or a BOM arrives.
 */
export function sniffBody(bytes: Uint8Array): NotAStream | false | undefined {
  for (const byte of bytes) {
    if (byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09) continue
    if (byte === 0xef || byte === 0xbb || byte === 0xbf) continue
    return byte === 0x3c ? 'a page' : byte === 0x7b ? 'a JSON document' : false
  }
  return undefined
}
