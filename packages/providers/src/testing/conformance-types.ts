import type { ClientConfig, LLMRequest } from '../types.js'
import type { CaseExpectations } from './contract.js'

/** One recorded or hand-written response of the wire under test. */
export interface ConformanceCase {
  /** Names the case in failures. */
  name: string
  /** The response body as SSE frames, exactly as the server sends them (see `frameFor`, `sseFrame`). */
  frames: readonly string[]
  /** The request to send. Default: one user message. */
  request?: LLMRequest
  /** What the final message must hold, where you know it. */
  expect?: CaseExpectations
  /**
   * Where the `cut-stream` and `stall` checks cut the body, in bytes. Default: half way. `false`
   * skips them for this case (a body that says it is complete in its first half).
   */
  cutAtByte?: number | false
}

/** The checks, by name (see docs/writing-a-provider.md). */
export type ConformanceCheck =
  /** Exactly one `done`, last, carrying a message valid by the protocol schema. */
  | 'stream'
  /** The deltas join to the message's text and thinking; one `tool_call_start` per tool call. */
  | 'deltas'
  /** Counts are counts, totals add up, cache and reasoning are parts of input and output. */
  | 'usage'
  /** The case's own `expect`. */
  | 'expectations'
  /** The same bytes sent one at a time give the same message. */
  | 'chunking'
  /** An unknown event before every frame changes nothing. */
  | 'unknown-event'
  /** Aborting after an item ends the stream with one aborted `done` holding what was delivered. */
  | 'abort'
  /** A signal aborted before the call gives an aborted `done` and no error. */
  | 'abort-before-start'
  /** Breaking out of the loop closes the HTTP request. */
  | 'break'
  /** A body cut short, or a reset connection, fails with a `ProviderError` carrying the partial message. */
  | 'cut-stream'
  /** An HTTP 401 is a `ProviderError` with its status, not retried, with the key kept out. */
  | 'http-error'
  /** A 429 with `Retry-After` is retried after the delay asked for, then succeeds. */
  | 'retry-after'
  /** A body that stops arriving fails with a `timeout` `ProviderError`. */
  | 'stall'

/** How {@link runProviderConformance} builds clients and which checks it runs. */
export interface ConformanceOptions {
  /** The api name clients are created with. Default `conformance`. */
  api?: string
  /** The model name. Default `conformance-model`. */
  model?: string
  /** More client config (an `apiKey`, adapter options). `baseUrl`, clock, ids and retries are the kit's. */
  config?: Partial<ClientConfig>
  /**
   * One SSE frame of an event type the wire does not define (e.g. `sseFrame('{"type":"x.new"}',
   * { event: 'x.new' })`). Default: one modelled on each case's frames (see `unknownFrameFor`);
   * when a case has no JSON event to model it on, the check is reported in `notRun`.
   */
  unknownEvent?: string
  /** At most this many abort points per case, spread over its items. Default 8. */
  abortPoints?: number
  /** Checks not to run. */
  skip?: readonly ConformanceCheck[]
}

/** One broken promise of the contract. */
export interface ConformanceFailure {
  check: ConformanceCheck
  /** The case, for per-case checks. */
  case?: string
  message: string
}

/** A check the run left out, and why. */
export interface ConformanceNotRun {
  check: ConformanceCheck
  /** The case, for per-case checks. */
  case?: string
  reason: string
}

/** What {@link runProviderConformance} found. */
export interface ConformanceReport {
  /** How many checks passed. */
  passed: number
  /** Empty when the provider meets the contract. */
  failures: ConformanceFailure[]
  /** Checks not run (listed in `skip`, opted out by a case, nothing to run them on). */
  notRun: ConformanceNotRun[]
}
