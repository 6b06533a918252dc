/** One piece of a scripted model response, in stream order. */
export type ScriptStep =
  /**
   * Reasoning. On Anthropic followed by its `signature` (default `scripted-signature-<index>`); on
   * Google the `signature`, if given, is the last thought's `thoughtSignature`; on OpenAI Responses
   * the reasoning item's `encrypted_content`.
   */
  | { thinking: string; signature?: string }
  | { text: string }
  /** An image the model produced, as a URL (Chat Completions `images`; Google `inlineData` from a data URL). */
  | { image: string }
  /** A tool call; `arguments` is an object (sent as JSON) or JSON text as the model would write it. */
  | { toolCall: { id: string; name: string; arguments: unknown } }
  /**
   * Anthropic only: a server-tool block as the API sends it (`server_tool_use` with an `input`,
   * streamed as one JSON delta; a `*_tool_result` block without one, sent whole).
   */
  | { serverBlock: { type: string } & Record<string, unknown> }

/** A model response for {@link scriptedResponse}. */
export interface ResponseScript {
  steps: readonly ScriptStep[]
  /** The response id. Default `scripted-response`. */
  id?: string
  /** The model the response names (Anthropic `message_start`, Google `modelVersion`, Responses `model`). Default `scripted-model`. */
  model?: string
  /**
   * The wire's raw stop value. Default: the api's tool-use value when a step calls a tool
   * (`tool_use`, `tool_calls`), else its normal end (`end_turn`, `stop`); Google's `finishReason`
   * is `STOP` either way; on OpenAI Responses anything but `completed` ends with
   * `response.incomplete` and this reason (`max_output_tokens`).
   */
  stop?: string
  /** Token counts of the response; `false` sends none. Default 100 in, 20 out. */
  usage?: { inputTokens: number; outputTokens: number } | false
  /**
   * Send only the first `stallAfter` steps, then keep the connection open without ending the
   * response: a model that is still working, for tests that interrupt it at a known point.
   */
  stallAfter?: number
}

/** The counts a script reports unless it says otherwise. */
export const DEFAULT_USAGE = { inputTokens: 100, outputTokens: 20 }

/** The token counts a script sends, or `undefined` for none. */
export function usageOf(script: ResponseScript): { inputTokens: number; outputTokens: number } | undefined {
  return script.usage === false ? undefined : (script.usage ?? DEFAULT_USAGE)
}

/** Tool arguments as JSON text: text is sent as written, anything else as its JSON. */
export function argumentsJson(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value)
}

/** Text a word at a time (with its surrounding spaces), the way models stream it. */
export function words(text: string): string[] {
  return text.match(/\s*\S+\s*/g) ?? [text]
}

/** Two non-empty fragments (one for a short text), so a test sees arguments arrive in pieces. */
export function halves(json: string): string[] {
  const half = Math.ceil(json.length / 2)
  return [json.slice(0, half), json.slice(half)].filter((piece) => piece !== '')
}
