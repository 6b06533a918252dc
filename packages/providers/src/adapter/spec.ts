import type {
  Citation,
  ImagePart,
  ProviderFields,
  SignatureFormat,
  StopDetails,
  StopReason,
  Usage,
} from '@kode/protocol'
import type { ErrorContext } from '../transport/failures.js'
import type { SseEvent } from '../transport/sse.js'
import type { ClientConfig, LLMRequest, ModelInfo } from '../types.js'

/**
 * The version of this provider-authoring spec. It changes only when an adapter written for an
 * earlier version would no longer work; an adapter may state the version it implements in
 * {@link WireAdapter.specVersion}.
 */
export const ADAPTER_SPEC_VERSION = 1

/**
 * The provider-authoring spec. An adapter is two mappings: `buildRequest` (messages -> the HTTP
 * request) and the event mapper (parsed SSE events -> calls on a {@link ResponseBuilder}). The
 * shared transport does the rest: fetch, retries, SSE decoding, idle timeout, abort, and building
 * the stream items and the final `AssistantMessage`.
 */
export interface WireAdapter {
  /**
   * The spec version the adapter implements ({@link ADAPTER_SPEC_VERSION} when it was written).
   * Optional; a client refuses an adapter stating a version it does not implement.
   */
  readonly specVersion?: number
  /** API root used when the host gives no `baseUrl`, e.g. `https://api.openai.com/v1`. */
  readonly defaultBaseUrl: string
  /** Messages -> request. Pure apart from reading image files; may cache per message object. */
  buildRequest(request: LLMRequest): WireRequest | Promise<WireRequest>
  /**
   * A fresh mapper for one response (each retry gets a new one). `request` is the call's, for a
   * mapping that depends on what was asked (the `anthropic` structured-output tool).
   */
  createEventMapper(request?: LLMRequest): EventMapper
  /** What tells the transport a response is complete; default `stop_reason`. See {@link Completion}. */
  readonly completesOn?: Completion
}

/**
 * How a wire says a response is over. A stream that closes before then fails as `stream_cut`
 * (retried only while nothing was delivered; the partial message travels on the error).
 * - `terminal_event`: only the wire's terminal event, reported with `out.complete()` (Anthropic
 *   `message_stop`, Chat Completions `data: [DONE]`, Responses `response.completed`). A stop
 *   reason without it is not enough: the stream was cut between the two.
 * - `stop_reason`: a stop reason (`out.stop`) is enough, for wires that have no terminal event
 *   (Gemini); `out.complete()` still completes the response.
 */
export type Completion = 'terminal_event' | 'stop_reason'

/** The HTTP request an adapter asks for; the transport POSTs `body` as JSON. */
export interface WireRequest {
  /** Appended to the base URL, e.g. `/chat/completions`. */
  path: string
  /** The api's own headers (auth, version). Host headers from the config are applied over these. */
  headers: Record<string, string>
  /**
   * Sent as `JSON.stringify(body)`. A `JsonText`, as the body or as a top-level field of it, is
   * written as its text: JSON the adapter kept from an earlier request (see `JsonTextCache`).
   */
  body: unknown
}

/**
 * Maps one SSE event onto the builder. Throw a `ProviderError` (see `errorFromPayload`) for an
 * error the provider sends inside the stream; ignore event types you do not know.
 */
export type EventMapper = (event: SseEvent, out: ResponseBuilder) => void

/** What a {@link ProviderFactory} receives: the client config, resolved. */
export interface AdapterConfig extends ClientConfig {
  /** The label (`config.provider ?? config.api`). */
  provider: string
  modelInfo: ModelInfo | undefined
  /** For `parseEventJson` / `errorFromPayload`: the label and the key to keep out of messages. */
  errors: ErrorContext
  createId: () => string
}

/** Builds the adapter of one client; called once by `createClient`. */
export type ProviderFactory = (config: AdapterConfig) => WireAdapter

/** How a reasoning signature is recorded. */
export interface SignatureOptions {
  format: SignatureFormat
  /** Anthropic `redacted_thinking`: the signature is the block's opaque data. */
  redacted?: boolean
  /** Provider item id (OpenAI Responses `rs_...`). */
  itemId?: string
}

/** The provider item a text delta belongs to (OpenAI Responses message items); kept on its part. */
export interface TextItem {
  /** The item id (`msg_...`). */
  itemId?: string
  /** The message `phase` (`commentary`, `final_answer`), sent back as received. */
  phase?: string
}

/**
 * The one accumulator's input side. Adapters report wire-neutral facts in stream order; the
 * builder turns them into stream items and the final message. Consecutive deltas of one kind
 * extend one part until `endBlock` or a delta of another kind, so text, reasoning, text stays
 * three parts. Empty deltas are ignored.
 */
export interface ResponseBuilder {
  /**
   * The provider's response id; the first non-empty one wins, unless `final` says this is the id
   * the response ended with (a proxy that gives each event its own id): that one is kept.
   */
  responseId(id: string | null | undefined, options?: { final?: boolean }): void
  /**
   * Answer text. With `item`, the part records the item id and phase, and a delta of another item
   * starts a new part (each item goes back as its own message).
   */
  text(delta: string, item?: TextItem): void
  /**
   * Text the model sent instead of an answer (OpenAI's `refusal`): kept as text, as `text` keeps
   * it, and the message's `stopDetails` is `{ category: 'refusal' }` unless the stop said more.
   */
  refusal(delta: string, item?: TextItem): void
  thinking(delta: string): void
  /**
   * The sources the model cited for text (see `Citation`): kept on the text part being written;
   * with none open, on the response's last text part (of `item`, when given); with none at all, on
   * a text part of its own with empty text. With `{ open: true }` they cite the text being written,
   * which may not have come yet (Anthropic sends a block's citations before or after its text):
   * with no text part open they start one, empty, which the text that follows extends, and never
   * go on earlier text. Reported as they arrive, they are in the message however it ends.
   */
  citations(citations: readonly Citation[], item?: TextItem, options?: { open?: boolean }): void
  /**
   * Opaque reasoning state. Consecutive calls of one format and item extend one signature part
   * (signature deltas); call `endBlock()` first to record a whole signature of its own (Gemini).
   */
  signature(signature: string, options: SignatureOptions): void
  image(part: ImagePart): void
  /**
   * Starts the tool call under `key` (the wire's index or block id) or fills in its id and name.
   * A different non-empty id under a known key starts a new call. `tool_call_start` is emitted
   * once, as soon as both id and name are known. `itemId` is the provider's item id where it differs
   * from the call id (OpenAI Responses `fc_...`).
   */
  toolCall(
    key: number | string,
    id: string | null | undefined,
    name: string | null | undefined,
    itemId?: string,
  ): void
  /** Appends argument JSON text to the tool call under `key` (starting it if needed). */
  toolCallArgs(key: number | string, json: string): void
  /**
   * The wire block's fields Kode has no field for, which the same format needs back (Anthropic
   * `caller`): kept on the call as `providerFields`. Replaces what was set for the call before.
   */
  toolCallFields(key: number | string, fields: ProviderFields): void
  /**
   * Response fields the same format needs back (Anthropic `container`): kept on the message as
   * `providerFields`. Later fields of one format are merged over earlier ones.
   */
  responseFields(fields: ProviderFields): void
  /**
   * Ends the current text or thinking part; with a key, also closes that tool call. A closed call
   * with empty arguments gets `{}` (unless the response stops with `length`: report a whole call's
   * `{}` yourself); a call whose arguments do not parse as JSON is marked
   * `incomplete` (and must not run) when it was cut: not closed, or cut by `length`, an abort or a
   * failure. Malformed arguments of a call closed in a finished response are kept as written.
   */
  endBlock(key?: number | string): void
  /**
   * A tool the provider ran itself (Anthropic `server_tool_use`, `web_search_tool_result`, ...):
   * kept whole as a `server_tool` part in stream order, never announced or executed as a call.
   */
  serverTool(format: string, block: { type: string }): void
  /** Closes every tool call (see `endBlock`). */
  closeToolCalls(): void
  /** Usage so far, already in Kode's convention (inclusive input); replaces what was set before. */
  usage(usage: Usage): void
  /**
   * Usage so far, as `read` returns it when the message is built (at its end, an abort or a
   * failure): for a wire that repeats its counts on every chunk, so that only the last are
   * converted. Replaces what was set before, as `usage` does; `read` returning `undefined` counts
   * as nothing reported since.
   */
  usageFrom(read: () => Usage | undefined): void
  /**
   * Registers what the mapping reports of the state it holds back (Gemini's grounding, sent again
   * as it grows and read at the finish) when the message is built, whatever ends the response:
   * its end, a cut, a failure or an abort. `flush` runs once, before the message is built, and
   * reports on the builder it is given; report facts there (citations, usage), not deltas, which an
   * abort drops. Register it when the mapping first holds something, not per event; a later call
   * replaces it. A flush that throws counts as reporting nothing more.
   */
  atEnd(flush: (out: ResponseBuilder) => void): void
  /** The cost the provider reported (OpenRouter); wins over catalog prices. */
  costUsd(usd: number): void
  /**
   * The provider's stop value and its mapping (`undefined` for values Kode has no word for), and
   * what the provider said beyond it (a refusal's category and explanation), kept on the message.
   */
  stop(raw: string, reason: StopReason | undefined, details?: StopDetails): void
  /** The wire's terminal event arrived (`[DONE]`, `message_stop`); see {@link Completion}. */
  complete(): void
}
