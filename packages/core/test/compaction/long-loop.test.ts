import { compactedHistory } from '@kode/core'
import { checkEventOrder } from '@kode/protocol'
import { deriveReplayEvents } from '@kode/session'
import { describe, expect, test } from 'vitest'
import { collect, useHarness } from '../helpers/harness.js'
import {
  bodyTokens,
  chatMessages,
  compactionsOf,
  isSummaryRequest,
  readChunk,
  TINY,
  TINY_INPUT_LIMIT,
  toolLoopModel,
} from '../helpers/small-window.js'

describe('a 200-turn tool loop with a 4,000-token window', { timeout: 60_000 }, () => {
  const h = useHarness('file')

  test('completes, compacting several times, every request under the window', async () => {
    const model = toolLoopModel(200)
    h().server.handle(model)
    const agent = h().createAgent({
      client: h().client({ model: 'tiny', catalog: TINY }),
      tools: [readChunk],
      system: 'You read logs.',
      maxTurns: 250,
    })
    const { events, outcome } = await collect(agent.run('Read the whole log'))
    expect(outcome.reason).toBe('completed')
    expect(outcome.text).toBe('done')
    expect(model.mainCalls()).toBe(201)

    const requests = h().server.requests
    for (const request of requests) expect(bodyTokens(request)).toBeLessThanOrEqual(TINY_INPUT_LIMIT)

    const history = await agent.history()
    const records = compactionsOf(history)
    expect(records.length).toBeGreaterThanOrEqual(5)
    expect(requests.filter(isSummaryRequest)).toHaveLength(records.length)
    // The whole history stays on disk: every call and its result.
    expect(history.filter((r) => 'role' in r && r.role === 'tool')).toHaveLength(200)

    // No request splits a tool call from its result.
    for (const request of requests.filter((r) => !isSummaryRequest(r))) {
      const messages = chatMessages(request)
      messages.forEach((message, i) => {
        if (message.role === 'tool') {
          const owner = messages.slice(0, i).findLast((m) => m.role === 'assistant')
          expect(owner?.tool_calls?.map((c) => c.id)).toContain(message.tool_call_id)
        }
        for (const { id } of message.tool_calls ?? []) {
          expect(messages.slice(i + 1).some((m) => m.role === 'tool' && m.tool_call_id === id)).toBe(true)
        }
      })
    }

    // Before every call the budget was reported, after any compaction it caused, and it was
    // within the limit each time.
    const budgets = events.flatMap((e) => (e.type === 'context_usage' && e.estimated ? [e] : []))
    expect(budgets).toHaveLength(201)
    for (const budget of budgets) {
      expect(budget).toMatchObject({ contextWindow: 4_000, outputReserve: 500, inputLimit: TINY_INPUT_LIMIT })
      expect(budget.contextTokens).toBeLessThanOrEqual(TINY_INPUT_LIMIT)
    }
    events.forEach((event, i) => {
      if (event.type === 'compaction_end')
        expect(events[i + 1]).toMatchObject({ type: 'context_usage', estimated: true })
      if (event.type === 'turn_start')
        expect(events[i + 1]).toMatchObject(
          events[i + 1]?.type === 'compaction_start' ? {} : { type: 'context_usage', estimated: true },
        )
    })
    // The summaries' usage counts in the task's, and each record keeps its own.
    const metadata = events.find((e) => e.type === 'task_metadata')
    expect(metadata?.type === 'task_metadata' && metadata.metadata.main.usage).toMatchObject({
      inputTokens: requests.reduce((sum, request) => sum + bodyTokens(request), 0),
      outputTokens: 20 * requests.length,
    })
    for (const record of records) expect(record.usage).toMatchObject({ outputTokens: 20 })
    expect(checkEventOrder(events)).toEqual([])
    const starts = events.filter((e) => e.type === 'compaction_start')
    const ends = events.filter((e) => e.type === 'compaction_end')
    expect(starts.map((e) => e.reason)).toEqual(records.map(() => 'threshold'))
    expect(ends.every((e) => e.compacted)).toBe(true)
    // Replay shows the whole history with a marker per compaction.
    const replay = deriveReplayEvents(history)
    expect(replay.filter((e) => e.type === 'compaction_end')).toHaveLength(records.length)
    expect(replay.filter((e) => e.type === 'tool_result')).toHaveLength(200)
    // The last request was the compacted view: the summary, then the kept turns.
    const last = chatMessages(requests.at(-1)!)
    expect(last[0]).toMatchObject({ role: 'system' })
    expect(JSON.stringify(last[1])).toContain(`Summary ${records.length}:`)
    expect(last.length).toBeLessThan(2 + 2 * 10)
    expect(compactedHistory(history).compaction).toEqual(records.at(-1))
  })
})
