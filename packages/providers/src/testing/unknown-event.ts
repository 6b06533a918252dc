import { SseDecoder } from '../transport/sse.js'
import { sseFrame } from './framing.js'

/** The name the derived event uses for its kind; no wire defines it. */
const UNKNOWN_KIND = 'kode_unknown'

/**
 * One SSE frame of an event kind the wire under test does not define, framed like `frames`: the
 * same line ending, an `event: kode_unknown` line if their events are named, and as data
 * `{"type":"kode_unknown"}` if every event's data has a string `type` (Anthropic, OpenAI
 * Responses, most typed wires), else `{"kode_unknown":{}}` (Chat Completions, Gemini).
 * `undefined` when no event's data is a JSON object: then there is nothing to model it on.
 */
export function unknownFrameFor(frames: readonly string[]): string | undefined {
  const decoder = new SseDecoder()
  const encoder = new TextEncoder()
  for (const frame of frames) decoder.feed(encoder.encode(frame))
  let objects = 0
  let typed = true
  let named = false
  for (let event = decoder.next(); event !== undefined; event = decoder.next()) {
    const data = parseObject(event.data)
    if (!data) continue
    objects++
    if (typeof data.type !== 'string') typed = false
    if (event.event !== undefined) named = true
  }
  if (objects === 0) return undefined
  const data = typed ? { type: UNKNOWN_KIND } : { [UNKNOWN_KIND]: {} }
  const crlf = frames.some((frame) => frame.includes('\r\n'))
  return sseFrame(JSON.stringify(data), {
    ...(named ? { event: UNKNOWN_KIND } : {}),
    lineEnding: crlf ? '\r\n' : '\n',
  })
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text)
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined
  } catch {
    return undefined
  }
}
