/** One SSE frame: optional `event:` name, the data (one `data:` line per line of it), a blank line. */
export function sseFrame(data: string, options: { event?: string; lineEnding?: '\n' | '\r\n' } = {}): string {
  const nl = options.lineEnding ?? '\n'
  const name = options.event !== undefined ? `event: ${options.event}${nl}` : ''
  const lines = data.split(/\r\n|\r|\n/)
  let out = name
  for (const line of lines) out += `data: ${line}${nl}`
  return out + nl
}

/** An SSE comment line (`: text`), which clients must ignore; OpenRouter sends them while it waits. */
export function sseComment(text: string): string {
  return `: ${text}\n\n`
}

/** OpenAI Chat Completions and OpenRouter: `data: <json>` per payload, then `data: [DONE]`. */
export function frameChat(payloads: readonly string[], options: { done?: boolean } = {}): string[] {
  const frames = payloads.map((p) => sseFrame(p))
  if (options.done !== false) frames.push(sseFrame('[DONE]'))
  return frames
}

/** Anthropic Messages and OpenAI Responses: `event: <payload.type>` then `data: <json>`. */
export function frameTyped(payloads: readonly string[]): string[] {
  return payloads.map((p) => sseFrame(p, { event: typeOf(p) }))
}

/** Google Gemini: `data: <json>` with CRLF line endings, no terminator. */
export function frameGoogle(payloads: readonly string[]): string[] {
  return payloads.map((p) => sseFrame(p, { lineEnding: '\r\n' }))
}

/** The built-in wire apis the framing helpers know. */
export type FramedApi = 'openai-chat' | 'openrouter' | 'anthropic' | 'openai-responses' | 'google'

/** Frames payloads (the `data:` JSON of each event, as recorded) the way `api` sends them. */
export function frameFor(api: FramedApi, payloads: readonly string[]): string[] {
  switch (api) {
    case 'openai-chat':
    case 'openrouter':
      return frameChat(payloads)
    case 'anthropic':
    case 'openai-responses':
      return frameTyped(payloads)
    case 'google':
      return frameGoogle(payloads)
    default: {
      const unknown: never = api
      throw new Error(`no framing for api ${String(unknown)}`)
    }
  }
}

function typeOf(payload: string): string {
  const parsed: unknown = JSON.parse(payload)
  const type = typeof parsed === 'object' && parsed !== null ? (parsed as { type?: unknown }).type : undefined
  if (typeof type !== 'string') throw new Error(`payload has no string "type": ${payload.slice(0, 80)}`)
  return type
}
