import { parseDataUrl } from '../../apis/shared/images.js'
import { argumentsJson, type ResponseScript, type ScriptStep, usageOf, words } from '../script.js'

/**
 * Gemini `streamGenerateContent?alt=sse`: one `GenerateContentResponse` chunk per piece, each
 * naming the model version and response id and carrying the usage so far; the last one has the
 * `finishReason`. Thoughts are text parts with `thought: true` (a step's `signature` rides its last
 * thought as `thoughtSignature`); a call is one `functionCall` part with its `args` object whole.
 */
export function googleChunks(
  script: ResponseScript,
  steps: readonly ScriptStep[],
  stalled: boolean,
): string[] {
  const usage = usageOf(script)
  const parts: unknown[] = []
  for (const step of steps) {
    if ('thinking' in step) {
      const pieces = words(step.thinking)
      pieces.forEach((text, i) => {
        const last = i === pieces.length - 1 && step.signature !== undefined
        parts.push(last ? { text, thought: true, thoughtSignature: step.signature } : { text, thought: true })
      })
    } else if ('text' in step) for (const text of words(step.text)) parts.push({ text })
    else if ('image' in step) {
      const image = parseDataUrl(step.image)
      if (!image) throw new TypeError('scriptedResponse: google images are data URLs (inlineData)')
      parts.push({ inlineData: { mimeType: image.mimeType, data: image.data } })
    } else if ('toolCall' in step) {
      const { id, name } = step.toolCall
      parts.push({ functionCall: { id, name, args: argumentsObject(step.toolCall.arguments) } })
    } else throw new TypeError('scriptedResponse: server-tool blocks are Anthropic only')
  }
  // A response with nothing to say still ends with a chunk: an empty text part and the finish.
  if (parts.length === 0 && !stalled) parts.push({ text: '' })
  return parts.map((part, i) => {
    const candidate: Record<string, unknown> = { content: { parts: [part], role: 'model' } }
    if (!stalled && i === parts.length - 1) candidate.finishReason = script.stop ?? 'STOP'
    candidate.index = 0
    const chunk: Record<string, unknown> = { candidates: [candidate] }
    if (usage) {
      chunk.usageMetadata = {
        promptTokenCount: usage.inputTokens,
        candidatesTokenCount: usage.outputTokens,
        totalTokenCount: usage.inputTokens + usage.outputTokens,
      }
    }
    chunk.modelVersion = script.model ?? 'scripted-model'
    chunk.responseId = script.id ?? 'scripted-response'
    return JSON.stringify(chunk)
  })
}

/** Gemini sends arguments as an object: JSON text is parsed (and must be an object). */
function argumentsObject(value: unknown): Record<string, unknown> {
  const parsed: unknown = typeof value === 'string' ? JSON.parse(argumentsJson(value)) : value
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new TypeError('scriptedResponse: google tool arguments are a JSON object')
  }
  return parsed as Record<string, unknown>
}
