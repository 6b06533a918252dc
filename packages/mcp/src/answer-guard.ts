import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import {
  ErrorCode,
  isJSONRPCErrorResponse,
  isJSONRPCNotification,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
  McpError,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js'
import { relay } from './relay.js'

/**
 * Why Kode failed a request itself rather than the server answering it. `closed`: the transport
 * closed with the request in flight. `stream-ended`: the stream that was to carry its answer ended
 * without it. `accepted`: the server answered the POST carrying it with 202 Accepted, which says
 * no answer will come (a protocol violation for a request). `not-resumed`: the server refused to
 * resume the stream that was to carry it until the SDK gave up. `unresumable`: that stream ended
 * without it, naming as the event to resume from one whose id cannot be sent in an HTTP header.
 * `malformed`: the server answered it with a message that is not valid JSON-RPC 2.0, which the SDK
 * drops as if nothing came.
 */
export type Unanswered = 'closed' | 'stream-ended' | 'accepted' | 'not-resumed' | 'unresumable' | 'malformed'

/** Why requests are given up on while the transport lives on. */
export type GivenUp = Exclude<Unanswered, 'closed'>

/**
 * What a request given up on fails with, as the error data of an `McpError`: an object no server
 * can send (answers are parsed JSON), so that such a failure is told from a server's own error,
 * whatever its code (servers use -32000, the SDK's "connection closed", for their own errors too).
 */
class GaveUp {
  constructor(
    readonly why: Unanswered,
    /** What more there is to say (an HTTP status), if anything. */
    readonly detail: string | undefined,
  ) {}
}

/** A transport whose requests still waiting for an answer can be failed at once. */
export interface AnswerGuard {
  /** What the client speaks to. */
  readonly transport: Transport
  /**
   * Fails those of `ids` still waiting for an answer, as if the server had answered them with an
   * error (see `unansweredBecause`); the others were answered meanwhile and are left alone.
   */
  giveUp(ids: readonly RequestId[], why: GivenUp, detail?: string): void
  /** Those of `ids` still waiting for an answer. */
  waiting(ids: readonly RequestId[]): RequestId[]
}

/**
 * Wraps `inner`, noting which requests the client sent are still unanswered. The SDK's client
 * offers no way to fail one request but its answer: a request whose answer will never come (the
 * stream that was to carry it ended without it) is failed by handing the client an error answer.
 * When the transport closes, the requests in flight are failed that way too, just before the
 * client hears of it (and would fail them with an error a server can send as well).
 */
export function guardAnswers(inner: Transport): AnswerGuard {
  const waiting = new Set<RequestId>()
  const fail = (ids: Iterable<RequestId>, why: Unanswered, detail?: string) => {
    for (const id of [...ids]) {
      if (!waiting.delete(id)) continue
      transport.onmessage?.({
        jsonrpc: '2.0',
        id,
        error: { code: ErrorCode.ConnectionClosed, message: REASONS[why], data: new GaveUp(why, detail) },
      })
    }
  }
  const transport = relay(inner, {
    sent(message) {
      if (isJSONRPCRequest(message)) waiting.add(message.id)
      else if (isCancellation(message)) waiting.delete(message.params.requestId)
    },
    received(message) {
      if (isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) {
        if (message.id !== undefined) waiting.delete(message.id)
      }
    },
    closed: () => fail(waiting, 'closed'),
  })
  return {
    transport,
    giveUp: fail,
    waiting: (ids) => ids.filter((id) => waiting.has(id)),
  }
}

/** The message of a request's error when Kode fails it, for whoever reads the bare `McpError`. */
const REASONS: Readonly<Record<Unanswered, string>> = {
  closed: 'Connection closed',
  'stream-ended': 'the stream that was to carry the answer ended without it',
  accepted: 'the server accepted the request (HTTP 202) without answering it',
  'not-resumed': 'the server did not resume the stream that was to carry the answer',
  unresumable:
    'the stream that was to carry the answer ended without it, naming an event id to resume it from that cannot be sent in an HTTP header',
  malformed: 'the server answered with a message that is not valid JSON-RPC 2.0',
}

/** Why Kode failed a request itself (see `AnswerGuard`); `undefined` for any other failure. */
export function unansweredBecause(
  error: unknown,
): { why: Unanswered; detail: string | undefined } | undefined {
  if (!(error instanceof McpError) || !(error.data instanceof GaveUp)) return undefined
  return { why: error.data.why, detail: error.data.detail }
}

/** The ids of the requests in a JSON-RPC body (a message, or a batch); none in anything else. */
export function requestIdsOf(body: unknown): RequestId[] {
  if (typeof body !== 'string') return []
  let parsed: unknown
  try {
    parsed = JSON.parse(body)
  } catch {
    return []
  }
  const messages = Array.isArray(parsed) ? parsed : [parsed]
  return messages.filter((message) => isJSONRPCRequest(message)).map((message) => message.id)
}

function isCancellation(
  message: JSONRPCMessage,
): message is JSONRPCMessage & { params: { requestId: RequestId } } {
  if (!isJSONRPCNotification(message) || message.method !== 'notifications/cancelled') return false
  const requestId = (message.params as { requestId?: unknown } | undefined)?.requestId
  return typeof requestId === 'string' || typeof requestId === 'number'
}
