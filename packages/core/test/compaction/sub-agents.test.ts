import { defineSubAgent } from '@kode/core'
import type { RecordedRequest, ScriptedResponse } from '@kode/providers/testing'
import { describe, expect, test } from 'vitest'
import { call, chatStream, say } from '../helpers/chat-wire.js'
import { collect, useHarness } from '../helpers/harness.js'
import {
  bodyTokens,
  compactionsOf,
  isSummaryRequest,
  readChunk,
  TINY,
  TINY_INPUT_LIMIT,
} from '../helpers/small-window.js'

const reader = defineSubAgent({
  name: 'reader',
  description: 'Reads the whole log and reports back',
  system: 'You read logs.',
  tools: [readChunk],
  maxTurns: 100,
})

describe('sub-agents', { timeout: 60_000 }, () => {
  const harness = useHarness()

  test('a sub-agent compacts its own session; the parent session is left as it is', async () => {
    const h = harness()
    let child = 0
    let summaries = 0
    h.server.handle((request: RecordedRequest): ScriptedResponse => {
      const usage = { prompt: bodyTokens(request), completion: 20 }
      if (isSummaryRequest(request))
        return chatStream({ id: `s${++summaries}`, steps: [say(`Summary ${summaries}.`)], usage })
      if (request.rawBody.includes('You read logs.')) {
        child++
        return child <= 40
          ? chatStream({ id: `c${child}`, steps: [call(`k${child}`, 'read_chunk', { n: child })], usage })
          : chatStream({ id: `c${child}`, steps: [say('the log is fine')], usage })
      }
      const parentTurn = h.server.requests.filter(
        (r) => !r.rawBody.includes('You read logs.') && !isSummaryRequest(r),
      ).length
      return parentTurn === 1
        ? chatStream({ id: 'p1', steps: [call('sub', 'reader', { prompt: 'read the log' })], usage })
        : chatStream({ id: 'p2', steps: [say('All good.')], usage })
    })
    const agent = h.createAgent({ client: h.client({ model: 'tiny', catalog: TINY }), tools: [reader] })
    const { events, outcome } = await collect(agent.run('Check the log'))
    expect(outcome.reason).toBe('completed')
    expect(outcome.text).toBe('All good.')
    for (const request of h.server.requests) expect(bodyTokens(request)).toBeLessThanOrEqual(TINY_INPUT_LIMIT)

    const childSession = events.find((e) => e.type === 'task_start' && e.subAgentState)!.sessionId
    const childCompactions = compactionsOf(await h.store.read(childSession))
    expect(childCompactions.length).toBeGreaterThanOrEqual(2)
    expect(compactionsOf(await agent.history())).toEqual([])
    const starts = events.filter((e) => e.type === 'compaction_start')
    expect(starts.length).toBe(childCompactions.length)
    expect(starts.every((e) => e.sessionId === childSession)).toBe(true)
  })
})
