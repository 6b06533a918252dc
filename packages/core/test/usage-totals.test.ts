import {
  addUsage,
  checkEventOrder,
  type Event,
  type HistoryEvent,
  type TaskMetadataRecord,
  type Usage,
} from '@kode/protocol'
import { frameTyped, scriptedResponse } from '@kode/providers/testing'
import { deriveReplayEvents, exportHtml, type SessionStore } from '@kode/session'
import { describe, expect, test } from 'vitest'
import { overloadedAfterStart } from './helpers/anthropic-wire.js'
import { chatStream, say } from './helpers/chat-wire.js'
import { collect, collectInterrupting, delay, useHarness } from './helpers/harness.js'
import { withAppends } from './helpers/recording-store.js'
import { readChunk, readChunkSession, TINY } from './helpers/small-window.js'

// One rule for usage: whatever a task's `task_metadata` counts is on a record of its history, so
// a host that totals the records, the HTML export and the task's own accounting agree; and each
// response it counts has one `usage` event, live and in replay alike.

/** The usage the records of a history carry: responses, compactions and unsaved compactions. */
function recordedUsage(history: readonly HistoryEvent[]): Usage {
  let total: Usage = {}
  for (const record of history) {
    const usage =
      'role' in record
        ? record.role === 'assistant'
          ? record.usage
          : undefined
        : record.type === 'compaction'
          ? record.usage
          : record.type === 'error' || record.type === 'interrupt'
            ? (record.compaction?.usage ?? record.usage)
            : undefined
    if (usage) total = addUsage(total, usage)
  }
  return total
}

function taskUsage(history: readonly HistoryEvent[]): Usage | undefined {
  const tasks = history.filter((r): r is TaskMetadataRecord => !('role' in r) && r.type === 'task_metadata')
  expect(tasks).toHaveLength(1)
  return tasks[0]!.metadata.main.usage
}

/**
 * What the task counted (`task_metadata`), checked to hold `inputTokens` and to be exactly the sum
 * of what its records carry.
 */
function countedAsRecorded(history: readonly HistoryEvent[], inputTokens: number): Usage | undefined {
  const counted = taskUsage(history)
  expect(counted?.inputTokens).toBe(inputTokens)
  expect(recordedUsage(history)).toEqual(counted)
  return counted
}

const usageEvents = (events: readonly Event[]) =>
  events.filter((e) => e.type === 'usage').map((e) => (e.type === 'usage' ? e.usage : undefined))

/** A session of finished tool turns big enough to pass the tiny model's compaction threshold. */
const longSession = (): HistoryEvent[] =>
  readChunkSession(6, (n) => `chunk ${n}: ${'x'.repeat(2_000)}`, { id: 'done', text: 'Read them.' })

describe('usage totals', () => {
  const harness = useHarness()

  test.each([
    [
      'cut at the output limit',
      { id: 'sum-1', steps: [say('The user asked to')], finish: 'length' as const },
    ],
    ['empty', { id: 'sum-1', steps: [] }],
  ])(
    'a summary that was made but failed (%s) keeps its usage on the marker, and every total agrees',
    async (_, summary) => {
      const h = harness()
      await h.store.create({ id: 'long' })
      await h.store.append('long', longSession())
      const agent = h.createAgent({
        sessionId: 'long',
        client: h.client({ model: 'tiny', catalog: TINY }),
        tools: [readChunk],
        compaction: { keepRecent: 1 },
      })
      h.server.enqueue(
        chatStream({ ...summary, usage: { prompt: 900, completion: 7 } }),
        chatStream({ id: 'r-1', steps: [say('Done.')], usage: { prompt: 3_100, completion: 2 } }),
      )

      const { outcome } = await collect(agent.run('Go on'))

      expect(outcome.reason).toBe('completed')
      const history = await agent.history()
      const task = history.slice(longSession().length)
      expect(task).toContainEqual(
        expect.objectContaining({
          type: 'error',
          compaction: expect.objectContaining({
            reason: 'threshold',
            usage: { inputTokens: 900, outputTokens: 7, totalTokens: 907 },
          }),
        }),
      )
      expect(taskUsage(task)).toEqual({ inputTokens: 4_000, outputTokens: 9, totalTokens: 4_009 })
      expect(recordedUsage(task)).toEqual(taskUsage(task))
      // The export's total counts the summary as a response, as it counts a saved summary.
      const html = exportHtml(task)
      expect(html).toContain('<footer class="totals">Total: 2 responses · 4,000 in · 9 out')
    },
  )

  test('a summary interrupted after the provider reported usage keeps it on the interrupt marker', async () => {
    const h = harness()
    await h.store.create({ id: 'long' })
    await h.store.append('long', longSession())
    const agent = h.createAgent({
      sessionId: 'long',
      client: h.client({ api: 'anthropic', model: 'claude-sonnet-4-5' }),
      compaction: { keepRecent: 1 },
    })
    const controller = new AbortController()
    // The summary starts (Anthropic reports its input tokens then), then stalls until interrupted.
    h.server.handle(() => {
      setTimeout(() => controller.abort(), 100)
      return scriptedResponse('anthropic', {
        id: 'msg_sum',
        model: 'claude-sonnet-4-5',
        steps: [{ text: 'The user asked' }],
        usage: { inputTokens: 900, outputTokens: 7 },
        stallAfter: 1,
      })
    })

    expect(await agent.compact({ signal: controller.signal })).toEqual({
      compacted: false,
      reason: 'aborted',
    })

    const [marker, ...rest] = (await agent.history()).slice(longSession().length)
    expect(rest).toEqual([])
    expect(marker).toMatchObject({
      type: 'interrupt',
      compaction: { reason: 'manual', usage: { inputTokens: 900 }, model: 'claude-sonnet-4-5' },
    })
    expect(exportHtml([marker!])).toContain('<footer class="totals">Total: 1 response · 900 in')
  })

  test('an interrupted response that reported usage counts once live, in replay and in the export', async () => {
    const h = harness()
    h.server.enqueue(
      scriptedResponse('anthropic', {
        id: 'msg_1',
        model: 'claude-sonnet-4-5',
        steps: [{ text: 'Partial answer that goes on.' }],
        usage: { inputTokens: 50, outputTokens: 30 },
        stallAfter: 1,
      }),
    )
    const agent = h.createAgent({ client: h.client({ api: 'anthropic', model: 'claude-sonnet-4-5' }) })

    const { events, outcome } = await collectInterrupting(
      agent,
      'q',
      (e) => e.type === 'assistant_text_end' || e.type === 'assistant_text_delta',
    )

    expect(outcome.reason).toBe('aborted')
    const history = await agent.history()
    // Anthropic reports the input tokens as the message starts: the partial response has them.
    const counted = countedAsRecorded(history, 50)
    const replay = deriveReplayEvents(history, { sessionId: agent.sessionId })
    expect(usageEvents(events)).toEqual([counted])
    expect(usageEvents(replay)).toEqual(usageEvents(events))
    expect(exportHtml(history)).toContain('<footer class="totals">Total: 1 response · 50 in')
  })

  /** Anthropic's `message_start`, which reports the request's input tokens before any output. */
  const messageStart = (inputTokens: number) => ({
    type: 'message_start',
    message: {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-5',
      content: [],
      stop_reason: null,
      usage: { input_tokens: inputTokens, output_tokens: 1 },
    },
  })

  test('a call interrupted before any output keeps the input tokens it was billed on its interrupt record', async () => {
    const h = harness()
    const agent = h.createAgent({ client: h.client({ api: 'anthropic', model: 'claude-sonnet-4-5' }) })
    const controller = new AbortController()
    // The message starts (the input tokens are reported), then the model thinks until interrupted.
    h.server.handle(() => {
      setTimeout(() => controller.abort(), 100)
      return scriptedResponse('anthropic', {
        id: 'msg_1',
        model: 'claude-sonnet-4-5',
        steps: [{ text: 'Never sent.' }],
        usage: { inputTokens: 700, outputTokens: 5 },
        stallAfter: 0,
      })
    })

    const { events, outcome } = await collect(agent.run('q', { signal: controller.signal }))

    expect(outcome.reason).toBe('aborted')
    const history = await agent.history()
    expect(history.at(-2)).toMatchObject({
      type: 'interrupt',
      turn: 'own',
      usage: { inputTokens: 700 },
      model: 'claude-sonnet-4-5',
    })
    const counted = countedAsRecorded(history, 700)
    const replay = deriveReplayEvents(history, { sessionId: agent.sessionId })
    expect(usageEvents(events)).toEqual([counted])
    expect(usageEvents(replay)).toEqual([counted])
    // Live and in replay, in the turn of the call, before its interrupt.
    const shape = (list: readonly Event[]) =>
      list.filter((e) => ['turn_start', 'usage', 'interrupt', 'turn_end'].includes(e.type)).map((e) => e.type)
    expect(shape(events)).toEqual(['turn_start', 'usage', 'interrupt', 'turn_end'])
    expect(shape(replay)).toEqual(shape(events))
    expect(checkEventOrder(replay)).toEqual([])
    expect(exportHtml(history)).toContain('<footer class="totals">Total: 1 response · 700 in')
  })

  test('a call that failed before any text keeps the input tokens it was billed on its error record', async () => {
    const h = harness()
    const agent = h.createAgent({ client: h.client({ api: 'anthropic', model: 'claude-sonnet-4-5' }) })
    h.server.enqueue({
      body: frameTyped(
        [
          messageStart(700),
          { type: 'error', error: { type: 'invalid_request_error', message: 'Bad block.' } },
        ].map((e) => JSON.stringify(e)),
      ),
    })

    const { events, outcome } = await collect(agent.run('q'))

    expect(outcome.reason).toBe('error')
    const history = await agent.history()
    expect(history.at(-2)).toMatchObject({
      type: 'error',
      turn: 'own',
      usage: { inputTokens: 700 },
      model: 'claude-sonnet-4-5',
    })
    countedAsRecorded(history, 700)
    // As for a failed response that kept text: counted, but no `usage` event, live or in replay.
    expect(usageEvents(events)).toEqual([])
    expect(usageEvents(deriveReplayEvents(history, { sessionId: agent.sessionId }))).toEqual([])
    expect(exportHtml(history)).toContain('<footer class="totals">Total: 1 response · 700 in')
  })

  test('an attempt retried after output keeps what its provider billed on a retry record', async () => {
    const h = harness()
    const agent = h.createAgent({
      client: h.client({ api: 'anthropic', model: 'claude-sonnet-4-5' }),
      retry: { maxAttempts: 2, baseDelayMs: 1 },
    })
    const answer = {
      id: 'msg_1',
      model: 'claude-sonnet-4-5',
      steps: [{ text: 'A long answer that will be cut off before it can finish streaming.' }],
      usage: { inputTokens: 700, outputTokens: 12 },
    }
    // The first attempt streams some text, then the connection is cut: the engine retries.
    const first = scriptedResponse('anthropic', answer)
    const bytes = (first.body as string[]).join('').length
    h.server.enqueue(
      { ...first, resetAfterBytes: Math.floor(bytes / 2) },
      scriptedResponse('anthropic', answer),
    )

    const { events, outcome } = await collect(agent.run('q'))

    expect(outcome.reason).toBe('completed')
    const history = await agent.history()
    expect(history).toContainEqual(
      expect.objectContaining({
        type: 'error',
        canRetry: true,
        usage: { inputTokens: 700, outputTokens: 1, totalTokens: 701 },
      }),
    )
    countedAsRecorded(history, 1_400)
    // The discarded attempt has no `usage` event, as a failed response has none.
    const replay = deriveReplayEvents(history, { sessionId: agent.sessionId })
    expect(usageEvents(events)).toEqual([{ inputTokens: 700, outputTokens: 12, totalTokens: 712 }])
    expect(usageEvents(replay)).toEqual(usageEvents(events))
    // Its retry notice is replayed where it was live: in the turn of the response that followed.
    const shape = (list: readonly Event[]) =>
      list
        .filter((e) => ['turn_start', 'error', 'response_complete', 'turn_end'].includes(e.type))
        .map((e) => (e.type === 'error' ? `error ${e.canRetry}` : e.type))
    expect(shape(events)).toEqual(['turn_start', 'error true', 'response_complete', 'turn_end'])
    expect(shape(replay)).toEqual(shape(events))
    expect(checkEventOrder(replay)).toEqual([])
    expect(exportHtml(history)).toContain('<footer class="totals">Total: 2 responses · 1,400 in')
  })

  const answer = (text: string) =>
    scriptedResponse('anthropic', {
      id: 'msg_2',
      model: 'claude-sonnet-4-5',
      steps: [{ text }],
      usage: { inputTokens: 700, outputTokens: 12 },
    })
  const isRetry = (r: HistoryEvent) => !('role' in r) && r.type === 'error' && r.canRetry === true
  const retryShape = (list: readonly Event[]) =>
    list
      .filter((e) =>
        [
          'turn_start',
          'error',
          'assistant_text_start',
          'response_complete',
          'interrupt',
          'turn_end',
        ].includes(e.type),
      )
      .map((e) => (e.type === 'error' ? `error ${e.canRetry}` : e.type))

  test('an attempt the client retried before any output keeps what its provider billed on a retry record', async () => {
    const h = harness()
    const agent = h.createAgent({ client: h.client({ api: 'anthropic', model: 'claude-sonnet-4-5' }) })
    h.server.enqueue(overloadedAfterStart('msg_1', 700), answer('Hello.'))

    const { events, outcome } = await collect(agent.run('q'))

    expect(outcome.reason).toBe('completed')
    expect(h.server.requests).toHaveLength(2)
    const history = await agent.history()
    const retries = history.filter(isRetry)
    expect(retries).toEqual([
      expect.objectContaining({
        code: 'overloaded_error',
        usage: { inputTokens: 700, outputTokens: 1, totalTokens: 701 },
        costUsd: (700 * 3 + 15) / 1e6,
        model: 'claude-sonnet-4-5',
      }),
    ])
    // Written before the response that followed, whose record holds its own usage only.
    const response = history.findIndex((r) => 'role' in r && r.role === 'assistant')
    expect(history.indexOf(retries[0]!)).toBeLessThan(response)
    countedAsRecorded(history, 1_400)
    const replay = deriveReplayEvents(history, { sessionId: agent.sessionId })
    expect(usageEvents(events)).toEqual([{ inputTokens: 700, outputTokens: 12, totalTokens: 712 }])
    expect(usageEvents(replay)).toEqual(usageEvents(events))
    // Its retry notice, live and in replay, in the turn of the response that followed.
    expect(retryShape(events)).toEqual([
      'turn_start',
      'error true',
      'assistant_text_start',
      'response_complete',
      'turn_end',
    ])
    expect(retryShape(replay).filter((e) => e !== 'assistant_text_start')).toEqual(
      retryShape(events).filter((e) => e !== 'assistant_text_start'),
    )
    expect(checkEventOrder(replay)).toEqual([])
    expect(exportHtml(history)).toContain('<footer class="totals">Total: 2 responses · 1,400 in')
  })

  test('a retry record that takes longer to write than the retry waits still comes before the response', async () => {
    const h = harness()
    const slow = slowErrorWrites(h.store, 150)
    const agent = h.createAgent({
      store: slow,
      client: h.client({ api: 'anthropic', model: 'claude-sonnet-4-5' }),
    })
    h.server.enqueue(overloadedAfterStart('msg_1', 700), answer('Hello.'))

    const { events, outcome } = await collect(agent.run('q'))

    expect(outcome.reason).toBe('completed')
    const history = await agent.history()
    const types = history.map((r) => ('role' in r ? r.role : r.type))
    expect(types.slice(types.indexOf('error'))).toEqual(['error', 'assistant', 'task_metadata'])
    expect(retryShape(events)).toEqual([
      'turn_start',
      'error true',
      'assistant_text_start',
      'response_complete',
      'turn_end',
    ])
    expect(recordedUsage(history)).toEqual(taskUsage(history))
  })

  test('interrupted at the retry notice: the retry record is kept once, before the interrupt', async () => {
    const h = harness()
    const agent = h.createAgent({
      client: h.client({ api: 'anthropic', model: 'claude-sonnet-4-5', retry: { baseDelayMs: 5_000 } }),
    })
    h.server.enqueue(overloadedAfterStart('msg_1', 700), answer('Never asked for.'))

    const { events, outcome } = await collectInterrupting(agent, 'q', (e) => e.type === 'error')

    expect(outcome.reason).toBe('aborted')
    expect(h.server.requests).toHaveLength(1)
    const history = await agent.history()
    const types = history.map((r) => ('role' in r ? r.role : r.type))
    expect(types.slice(types.indexOf('error'))).toEqual(['error', 'interrupt', 'task_metadata'])
    expect(history.filter(isRetry)).toHaveLength(1)
    countedAsRecorded(history, 700)
    const replay = deriveReplayEvents(history, { sessionId: agent.sessionId })
    expect(retryShape(events)).toEqual(['turn_start', 'error true', 'interrupt', 'turn_end'])
    expect(retryShape(replay)).toEqual(retryShape(events))
    expect(checkEventOrder(replay)).toEqual([])
    expect(exportHtml(history)).toContain('<footer class="totals">Total: 1 response · 700 in')
  })

  test('interrupted while the retry record is being written: it is kept once, before the interrupt', async () => {
    const h = harness()
    const controller = new AbortController()
    const store = slowErrorWrites(h.store, 100, () => controller.abort())
    const agent = h.createAgent({
      store,
      client: h.client({ api: 'anthropic', model: 'claude-sonnet-4-5' }),
    })
    h.server.enqueue(overloadedAfterStart('msg_1', 700), answer('Hello.'))

    const { events, outcome } = await collect(agent.run('q', { signal: controller.signal }))

    expect(outcome.reason).toBe('aborted')
    const history = await agent.history()
    const types = history.map((r) => ('role' in r ? r.role : r.type))
    expect(types.slice(types.indexOf('error'))).toEqual(['error', 'interrupt', 'task_metadata'])
    expect(history.filter(isRetry)).toHaveLength(1)
    expect(recordedUsage(history)).toEqual(taskUsage(history))
    expect(retryShape(events)).toEqual(['turn_start', 'error true', 'interrupt', 'turn_end'])
  })

  // A summary request is the client's to retry as any request is: what its retried attempts were
  // billed belongs to the compaction's one record (saved, or the marker of one that saved nothing).
  describe('a summary attempt the client retried', () => {
    /** The Anthropic model with a window of a few thousand tokens, so the long session compacts. */
    const SMALL_CLAUDE = { 'claude-sonnet-4-5': { ...TINY.tiny!, prices: { input: 3, output: 15 } } }
    const summaryAnswer = scriptedResponse('anthropic', {
      id: 'msg_sum',
      model: 'claude-sonnet-4-5',
      steps: [{ text: 'The user had six chunks read.' }],
      usage: { inputTokens: 900, outputTokens: 7 },
    })
    const compactingAgent = async (h: ReturnType<typeof harness>, retry?: { baseDelayMs: number }) => {
      await h.store.create({ id: 'long' })
      await h.store.append('long', longSession())
      return h.createAgent({
        sessionId: 'long',
        client: h.client({
          api: 'anthropic',
          model: 'claude-sonnet-4-5',
          catalog: SMALL_CLAUDE,
          ...(retry ? { retry } : {}),
        }),
        tools: [readChunk],
        compaction: { keepRecent: 1 },
      })
    }
    const compactionShape = (list: readonly Event[]) =>
      list
        .filter((e) => ['compaction_start', 'compaction_end', 'error', 'interrupt'].includes(e.type))
        .map((e) => (e.type === 'compaction_end' ? `${e.type} ${e.compacted}` : e.type))

    test('is kept on the compaction record with the summary, and every total agrees', async () => {
      const h = harness()
      const agent = await compactingAgent(h)
      h.server.enqueue(overloadedAfterStart('msg_s1', 900), summaryAnswer, answer('Done.'))

      const { events, outcome } = await collect(agent.run('Go on'))

      expect(outcome.reason).toBe('completed')
      expect(h.server.requests).toHaveLength(3)
      const task = (await agent.history()).slice(longSession().length)
      expect(task).toContainEqual(
        expect.objectContaining({
          type: 'compaction',
          usage: { inputTokens: 1_800, outputTokens: 8, totalTokens: 1_808 },
          costUsd: expect.closeTo((1_800 * 3 + 8 * 15) / 1e6, 12),
          model: 'claude-sonnet-4-5',
        }),
      )
      expect(taskUsage(task)).toEqual({ inputTokens: 2_500, outputTokens: 20, totalTokens: 2_520 })
      expect(recordedUsage(task)).toEqual(taskUsage(task))
      // Live and in replay alike: the compaction's events with its retry's notice, no usage event of it.
      const replay = deriveReplayEvents(task, { sessionId: agent.sessionId })
      expect(compactionShape(events)).toEqual(['compaction_start', 'error', 'compaction_end true'])
      expect(compactionShape(replay)).toEqual(compactionShape(events))
      expect(usageEvents(events)).toEqual([{ inputTokens: 700, outputTokens: 12, totalTokens: 712 }])
      expect(usageEvents(replay)).toEqual(usageEvents(events))
      expect(exportHtml(task)).toContain('<footer class="totals">Total: 2 responses · 2,500 in · 20 out')
    })

    test('then a failed attempt: both are kept on its error marker', async () => {
      const h = harness()
      const agent = await compactingAgent(h)
      const refused = {
        body: frameTyped(
          [
            messageStart(900),
            { type: 'error', error: { type: 'invalid_request_error', message: 'Bad block.' } },
          ].map((e) => JSON.stringify(e)),
        ),
      }
      h.server.enqueue(overloadedAfterStart('msg_s1', 900), refused, answer('Done.'))

      const { events, outcome } = await collect(agent.run('Go on'))

      expect(outcome.reason).toBe('completed')
      const task = (await agent.history()).slice(longSession().length)
      expect(task).toContainEqual(
        expect.objectContaining({
          type: 'error',
          canRetry: false,
          compaction: expect.objectContaining({
            reason: 'threshold',
            usage: { inputTokens: 1_800, outputTokens: 2, totalTokens: 1_802 },
            model: 'claude-sonnet-4-5',
          }),
        }),
      )
      expect(taskUsage(task)?.inputTokens).toBe(2_500)
      expect(recordedUsage(task)).toEqual(taskUsage(task))
      const replay = deriveReplayEvents(task, { sessionId: agent.sessionId })
      expect(compactionShape(events)).toEqual(['compaction_start', 'error', 'compaction_end false'])
      expect(compactionShape(replay)).toEqual(compactionShape(events))
    })

    test('then interrupted while the client waits to retry: it is kept on the interrupt marker', async () => {
      const h = harness()
      const agent = await compactingAgent(h, { baseDelayMs: 5_000 })
      const controller = new AbortController()
      h.server.handle(() => {
        setTimeout(() => controller.abort(), 100)
        return overloadedAfterStart('msg_s1', 900)
      })

      const { events, outcome } = await collect(agent.run('Go on', { signal: controller.signal }))

      expect(outcome.reason).toBe('aborted')
      expect(h.server.requests).toHaveLength(1)
      const task = (await agent.history()).slice(longSession().length)
      expect(task).toContainEqual(
        expect.objectContaining({
          type: 'interrupt',
          compaction: expect.objectContaining({
            usage: { inputTokens: 900, outputTokens: 1, totalTokens: 901 },
          }),
        }),
      )
      expect(taskUsage(task)?.inputTokens).toBe(900)
      expect(recordedUsage(task)).toEqual(taskUsage(task))
      const replay = deriveReplayEvents(task, { sessionId: agent.sessionId })
      expect(compactionShape(replay)).toEqual(compactionShape(events))
      expect(exportHtml(task)).toContain('<footer class="totals">Total: 1 response · 900 in')
    })
  })
})

/**
 * `store` with every append of an `error` record held for `ms` (calling `onWrite` as it starts):
 * a slow disk, at the moment that matters here.
 */
function slowErrorWrites(store: SessionStore, ms: number, onWrite: () => void = () => {}): SessionStore {
  return withAppends(store, async (events, next) => {
    if (events.some((e) => !('role' in e) && e.type === 'error')) {
      onWrite()
      await delay(ms)
    }
    return next(events)
  })
}
