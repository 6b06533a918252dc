import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js'
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
  type StreamableHTTPReconnectionOptions,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import { releaseCancelledStreams } from './cancelled-streams.js'
import {
  type AnswerWatch,
  type ConnectionLoss,
  type ExchangeWatch,
  watchExchanges,
} from './connection-loss.js'
import { type McpHttpServerOptions, maxMessageBytesOf } from './options.js'
import { refuseCrossOriginRedirects } from './redirect-guard.js'

/**
 * How the SDK resumes a broken answer stream: its own defaults, stated here because the exchange
 * watch counts the attempts to know when the SDK has given up (see `ExchangeWatch.resumeAttempts`).
 */
const RECONNECTION: StreamableHTTPReconnectionOptions = {
  initialReconnectionDelay: 1_000,
  maxReconnectionDelay: 30_000,
  reconnectionDelayGrowFactor: 1.5,
  maxRetries: 2,
}

/** The HTTP transports, in the order `auto` tries them. */
export type HttpTransportKind = 'streamable-http' | 'sse'

/** The kinds to try for `options.transport`. */
export function httpKinds(options: McpHttpServerOptions): HttpTransportKind[] {
  const choice = options.transport ?? 'auto'
  return choice === 'auto' ? ['streamable-http', 'sse'] : [choice]
}

/**
 * A fresh transport of `kind` to the server. It tells `lose` of a message larger than
 * `maxMessageBytes` and of a lost exchange carrying answers, and `answers` of requests whose
 * answers will never come though the server lives on (see `watchExchanges`).
 */
export function httpTransport(
  options: McpHttpServerOptions,
  kind: HttpTransportKind,
  lose: (loss: ConnectionLoss) => void,
  answers: AnswerWatch,
): Transport {
  const url = new URL(options.url)
  const requestInit: RequestInit = options.headers ? { headers: { ...options.headers } } : {}
  const watched = (answersOver: ExchangeWatch['answersOver']) =>
    watchExchanges(
      // Read at each request, as the SDK does: a host may replace the global fetch later.
      (input, init) => (options.fetch ?? fetch)(input, init),
      {
        lose,
        ...answers,
        resumeAttempts: RECONNECTION.maxRetries,
        maxMessageBytes: maxMessageBytesOf(options),
        answersOver,
      },
    )
  switch (kind) {
    case 'streamable-http':
      return new StreamableHTTPClientTransport(url, {
        requestInit,
        fetch: refuseCrossOriginRedirects(
          releaseCancelledStreams(watched('posts'), answers.waiting),
          options.name,
        ),
        reconnectionOptions: RECONNECTION,
      })
    case 'sse':
      // Its POSTs are only accepted (202): the answers come over the event stream.
      return new SSEClientTransport(url, {
        requestInit,
        fetch: refuseCrossOriginRedirects(watched('event-stream'), options.name),
      })
    default: {
      const unknown: never = kind
      throw new Error(`unknown transport ${String(unknown)}`)
    }
  }
}

/**
 * Whether a failed streamable-HTTP handshake means "this is an older HTTP+SSE server": it answered
 * the `initialize` POST with 400, 404 or 405, as the specification's backwards-compatibility rule says.
 */
export function suggestsSse(error: unknown): boolean {
  return error instanceof StreamableHTTPError && [400, 404, 405].includes(error.code ?? 0)
}

/**
 * The HTTP status a streamable-HTTP request was answered with, which the SDK's error keeps in its
 * `code` but not in its message (`-1` is its code for an answer of the wrong content type). The
 * HTTP+SSE transport's errors say theirs in their message.
 */
export function httpStatusOf(error: unknown): number | undefined {
  if (!(error instanceof StreamableHTTPError)) return undefined
  const { code } = error
  return code !== undefined && code >= 100 && code <= 599 ? code : undefined
}

/** Ends a streamable-HTTP session politely (HTTP DELETE), giving up after `ms`: close must not hang. */
export async function terminateSession(transport: Transport, ms: number): Promise<void> {
  if (!(transport instanceof StreamableHTTPClientTransport) || transport.sessionId === undefined) return
  let timer: ReturnType<typeof setTimeout> | undefined
  const deadline = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms)
  })
  await Promise.race([transport.terminateSession().catch(() => undefined), deadline])
  clearTimeout(timer)
}
