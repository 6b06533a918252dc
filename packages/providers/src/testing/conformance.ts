import type { AssistantMessage, StreamItem } from '@kode/protocol'
import type { ProviderFactory } from '../adapter/spec.js'
import { clientFor } from '../client.js'
import { ProviderError } from '../transport/errors.js'
import type { ClientConfig, LLMRequest, RetryInfo, StreamOptions } from '../types.js'
import type {
  ConformanceCase,
  ConformanceCheck,
  ConformanceOptions,
  ConformanceReport,
} from './conformance-types.js'
import {
  deltaProblems,
  describe,
  expectationProblems,
  failsWithPartial,
  type Outcome,
  sameMessage,
  schemaProblems,
  streamProblems,
  usageProblems,
} from './contract.js'
import { openedFetch } from './opened-fetch.js'
import { createSseTestServer, type ScriptedResponse, type SseTestServer } from './server.js'
import { unknownFrameFor } from './unknown-event.js'

const KEY = 'sk-conformance-0123456789abcdef'

/**
 * Runs the provider contract against `factory` (a plugin's, or a built-in one) on a local SSE
 * test server, once per case and check, and reports what failed. It needs no test framework:
 * assert on the report in yours (`expect(report.failures).toEqual([])`). Clients are built from
 * the factory directly; nothing is registered.
 */
export async function runProviderConformance(
  factory: ProviderFactory,
  cases: readonly ConformanceCase[],
  options: ConformanceOptions = {},
): Promise<ConformanceReport> {
  if (cases.length === 0) throw new TypeError('runProviderConformance: give at least one case')
  const server = await createSseTestServer()
  const run = new Run(factory, server, options)
  try {
    const baselines: { case: ConformanceCase; message: AssistantMessage; items: number }[] = []
    for (const c of cases) {
      const baseline = await run.caseChecks(c)
      if (baseline) baselines.push({ case: c, ...baseline })
    }
    await run.onceChecks(baselines)
  } finally {
    await server.close()
  }
  return run.report
}

/** The state of one conformance run: the server, the clients it makes, the findings. */
class Run {
  readonly report: ConformanceReport = { passed: 0, failures: [], notRun: [] }
  private readonly skip: ReadonlySet<ConformanceCheck>
  private readonly key: string

  constructor(
    private readonly factory: ProviderFactory,
    private readonly server: SseTestServer,
    private readonly options: ConformanceOptions,
  ) {
    this.skip = new Set(options.skip ?? [])
    this.key = options.config?.apiKey ?? KEY
  }

  /** The per-case checks; returns the baseline message when the case streamed one. */
  async caseChecks(c: ConformanceCase): Promise<{ message: AssistantMessage; items: number } | undefined> {
    const base = await this.play(c, { body: c.frames })
    let message: AssistantMessage | undefined
    await this.check('stream', c, async () => {
      if (base.error !== undefined) return [`the stream threw: ${describe(base.error)}`]
      const problems = streamProblems(base.items)
      const done = base.items.at(-1)
      if (done?.type === 'done') message = done.message
      return message ? [...problems, ...schemaProblems(message)] : problems
    })
    if (!message) return undefined
    const final = message
    await this.check('deltas', c, async () => deltaProblems(base.items, final))
    await this.check('usage', c, async () => usageProblems(final.usage))
    if (c.expect) await this.check('expectations', c, async () => expectationProblems(final, c.expect!))
    await this.check('chunking', c, async () =>
      sameMessage(
        await this.play(c, { body: c.frames, chunks: { maxBytes: 1 } }),
        final,
        'one byte at a time',
      ),
    )
    const unknown = this.options.unknownEvent ?? unknownFrameFor(c.frames)
    if (unknown !== undefined) {
      await this.check('unknown-event', c, async () => {
        const body = c.frames.flatMap((frame) => [unknown, frame])
        return sameMessage(await this.play(c, { body }), final, 'with unknown events')
      })
    } else {
      const reason = 'no frame of the case has JSON object data to model one on; give options.unknownEvent'
      this.notRun('unknown-event', c, reason)
    }
    await this.check('abort', c, async () => this.abortProblems(c, base.items.length - 1))
    if (c.cutAtByte !== false) await this.check('cut-stream', c, async () => this.cutProblems(c))
    else this.notRun('cut-stream', c, 'the case sets cutAtByte: false')
    return { message: final, items: base.items.length }
  }

  /** Checks of the transport's behaviour through this adapter, run once with the given cases. */
  async onceChecks(
    baselines: { case: ConformanceCase; message: AssistantMessage; items: number }[],
  ): Promise<void> {
    const first = baselines[0]
    if (!first) return
    const busiest = baselines.reduce((a, b) => (b.items > a.items ? b : a))
    await this.check('break', busiest.case, async () => this.breakProblems(busiest.case))
    await this.check('http-error', undefined, async () => this.httpErrorProblems(first.case))
    await this.check('retry-after', first.case, async () =>
      this.retryAfterProblems(first.case, first.message),
    )
    const cuttable = baselines.find((b) => b.case.cutAtByte !== false)
    if (cuttable) await this.check('stall', cuttable.case, async () => this.stallProblems(cuttable.case))
    else this.notRun('stall', undefined, 'every case sets cutAtByte: false')
    // Last: a request the aborted fetch may still deliver must not meet another check's script.
    await this.check('abort-before-start', first.case, async () => {
      const aborted = AbortSignal.abort()
      const outcome = await this.stream(first.case, {}, { signal: aborted })
      if (outcome.error !== undefined) return [`threw instead of ending aborted: ${describe(outcome.error)}`]
      const done = outcome.items.at(-1)
      return [
        ...streamProblems(outcome.items),
        ...(done?.type === 'done' && done.message.stopReason !== 'aborted'
          ? ['the done message is not aborted']
          : []),
      ]
    })
  }

  private async abortProblems(c: ConformanceCase, delivered: number): Promise<string[]> {
    const problems: string[] = []
    for (const at of spread(delivered, this.options.abortPoints ?? 8)) {
      const controller = new AbortController()
      const outcome = await this.play(
        c,
        { body: c.frames },
        {},
        { signal: controller.signal },
        (_, index) => {
          if (index === at) controller.abort()
        },
      )
      const where = `aborted after item ${at}`
      if (outcome.error !== undefined) {
        problems.push(`${where}: threw ${describe(outcome.error)}`)
        continue
      }
      problems.push(...streamProblems(outcome.items).map((p) => `${where}: ${p}`))
      const done = outcome.items.at(-1)
      if (done?.type !== 'done') continue
      if (done.message.stopReason !== 'aborted')
        problems.push(`${where}: stopReason is ${done.message.stopReason}`)
      if (outcome.items.length !== at + 2)
        problems.push(`${where}: ${outcome.items.length - at - 2} items arrived after the abort`)
      problems.push(...deltaProblems(outcome.items, done.message, true).map((p) => `${where}: ${p}`))
    }
    return problems
  }

  private async cutProblems(c: ConformanceCase): Promise<string[]> {
    const bytes = new TextEncoder().encode(c.frames.join(''))
    const cut = cutPoint(c, bytes)
    return [
      ...failsWithPartial(await this.play(c, { body: bytes.subarray(0, cut) }), 'cut short'),
      ...failsWithPartial(await this.play(c, { body: bytes, resetAfterBytes: cut }), 'reset'),
    ]
  }

  private async stallProblems(c: ConformanceCase): Promise<string[]> {
    const bytes = new TextEncoder().encode(c.frames.join(''))
    const cut = cutPoint(c, bytes)
    this.server.enqueue({ body: bytes, stallAfterBytes: cut })
    // The headers and the bytes before the stall are in before the client's watchdog starts, so
    // on a loaded machine it cannot fire before them: only on the stall.
    const fetch = await openedFetch(this.server, cut)
    const outcome = await this.stream(c, { idleTimeoutMs: 300, fetch }, {})
    const problems = failsWithPartial(outcome, 'stalled')
    if (ProviderError.is(outcome.error) && outcome.error.code !== 'timeout')
      problems.push(`stalled: the error code is ${outcome.error.code}, not timeout`)
    return problems
  }

  private async breakProblems(c: ConformanceCase): Promise<string[]> {
    const bytes = new TextEncoder().encode(c.frames.join(''))
    let request: number | undefined
    // Everything but the last byte, then silence: the response cannot end on its own.
    this.server.handle((_, index) => {
      request = index
      return { body: bytes, stallAfterBytes: bytes.length - 1 }
    })
    try {
      let items = 0
      const client = this.client({ idleTimeoutMs: 2_000 })
      for await (const _ of client.stream(c.request ?? ASK)) {
        items++
        break
      }
      if (items === 0 || request === undefined) return ['no item arrived before the last event']
      const end = await this.server.ended(request)
      return end === 'client_closed' ? [] : [`after break the request ended as ${end}, not client_closed`]
    } catch (error) {
      return [`the case must yield an item before its last event: ${describe(error)}`]
    } finally {
      this.server.handle(undefined)
    }
  }

  private async httpErrorProblems(c: ConformanceCase): Promise<string[]> {
    const before = this.server.requests.length
    const body = JSON.stringify({
      error: { message: `Incorrect API key provided: ${this.key}`, code: 'invalid_api_key' },
    })
    const outcome = await this.play(c, { status: 401, body }, { retry: { maxAttempts: 3, baseDelayMs: 1 } })
    const error = outcome.error
    if (!ProviderError.is(error))
      return [`expected a ProviderError, got ${describe(error ?? outcome.items.at(-1))}`]
    const problems: string[] = []
    if (error.status !== 401) problems.push(`status is ${error.status}, not 401`)
    if (error.retryable) problems.push('a 401 is marked retryable')
    if (this.server.requests.length - before !== 1)
      problems.push(`${this.server.requests.length - before} requests for a 401`)
    if (`${error.message} ${error.providerMessage}`.includes(this.key))
      problems.push('the error contains the API key')
    return problems
  }

  private async retryAfterProblems(c: ConformanceCase, expected: AssistantMessage): Promise<string[]> {
    const busy: ScriptedResponse = {
      status: 429,
      headers: { 'content-type': 'application/json', 'retry-after': '0' },
      body: '{"error":{"message":"Rate limit reached","type":"rate_limit_error"}}',
    }
    this.server.enqueue(busy)
    const retries: RetryInfo[] = []
    // Without Retry-After the backoff would exceed the budget, so only an honoured header retries.
    const retry = { maxAttempts: 2, baseDelayMs: 60_000, maxDelayMs: 60_000, budgetMs: 5_000 }
    const outcome = await this.play(
      c,
      { body: c.frames },
      { retry },
      { onRetry: (info) => retries.push(info) },
    )
    const problems = sameMessage(outcome, expected, 'after a 429')
    if (retries.length !== 1) problems.push(`${retries.length} retries instead of 1`)
    else if (retries[0]!.delayMs !== 0 || retries[0]!.error.status !== 429)
      problems.push(`retried after ${retries[0]!.delayMs} ms for status ${retries[0]!.error.status}`)
    return problems
  }

  /** Runs `fn`, recording its problems (or what it threw) under `check`. */
  private async check(
    check: ConformanceCheck,
    c: ConformanceCase | undefined,
    fn: () => Promise<string[]>,
  ): Promise<void> {
    if (this.skip.has(check)) return this.notRun(check, c, 'listed in options.skip')
    let problems: string[]
    try {
      problems = await fn()
    } catch (error) {
      problems = [`the check itself failed: ${describe(error)}`]
    }
    if (problems.length === 0) this.report.passed++
    for (const message of problems)
      this.report.failures.push(c ? { check, case: c.name, message } : { check, message })
  }

  /** Records a check that did not run, so a report never passes it silently. */
  private notRun(check: ConformanceCheck, c: ConformanceCase | undefined, reason: string): void {
    this.report.notRun.push(c ? { check, case: c.name, reason } : { check, reason })
  }

  /** Queues `response` and streams the case's request against it. */
  private play(
    c: ConformanceCase,
    response: ScriptedResponse,
    config: Partial<ClientConfig> = {},
    options: StreamOptions = {},
    onItem?: (item: StreamItem, index: number) => void,
  ): Promise<Outcome> {
    this.server.enqueue(response)
    return this.stream(c, config, options, onItem)
  }

  private async stream(
    c: ConformanceCase,
    config: Partial<ClientConfig>,
    options: StreamOptions,
    onItem?: (item: StreamItem, index: number) => void,
  ): Promise<Outcome> {
    const items: StreamItem[] = []
    try {
      for await (const item of this.client(config).stream(c.request ?? ASK, options)) {
        items.push(item)
        onItem?.(item, items.length - 1)
      }
      return { items }
    } catch (error) {
      return { items, error }
    }
  }

  /** A fresh client: same ids and clock every time, so messages of two runs compare equal. */
  private client(extra: Partial<ClientConfig>) {
    let ids = 0
    return clientFor(this.factory, {
      api: this.options.api ?? 'conformance',
      model: this.options.model ?? 'conformance-model',
      ...this.options.config,
      apiKey: this.key,
      baseUrl: this.server.url,
      retry: { maxAttempts: 1 },
      idleTimeoutMs: 10_000,
      now: () => 1_000,
      createId: () => `conformance-${++ids}`,
      ...extra,
    })
  }
}

const ASK: LLMRequest = {
  messages: [{ role: 'user', id: 'conformance-user', createdAt: 0, parts: [{ type: 'text', text: 'Hi' }] }],
}

function cutPoint(c: ConformanceCase, bytes: Uint8Array): number {
  return typeof c.cutAtByte === 'number' ? c.cutAtByte : Math.floor(bytes.length / 2)
}

/** Up to `most` item indexes from 0 to `count - 1`, first and last included, evenly spread. */
function spread(count: number, most: number): number[] {
  if (count <= 0) return []
  if (count <= most) return Array.from({ length: count }, (_, i) => i)
  const points = new Set<number>()
  for (let i = 0; i < most; i++) points.add(Math.round((i * (count - 1)) / (most - 1)))
  return [...points]
}
