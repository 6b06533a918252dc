import type { AssistantMessage, SignatureFormat, ThinkingSignaturePart } from '@kode/protocol'

/** Who a client is, for deciding whether reasoning it receives is its own. */
export interface Speaker {
  api: string
  provider: string
  model: string
}

/** Whether `message` was produced by the same api, provider label and model as `speaker`. */
export function isOwnMessage(message: AssistantMessage, speaker: Speaker): boolean {
  return (
    message.api === speaker.api && message.provider === speaker.provider && message.model === speaker.model
  )
}

/** Whether a signature can go back to `format` for `model`: only to the format and model that made it. */
export function signatureFits(part: ThinkingSignaturePart, format: SignatureFormat, model: string): boolean {
  return part.format === format && part.model === model
}

/** Kode's default rendering of reasoning that has to travel as plain text. */
export function defaultThinkingAsText(text: string): string {
  return `<thinking>\n${text}\n</thinking>`
}

/** The configured rendering of foreign reasoning; `undefined` means drop it. */
export function thinkingRenderer(
  option: ((text: string) => string) | false | undefined,
): ((text: string) => string) | undefined {
  return option === false ? undefined : (option ?? defaultThinkingAsText)
}
