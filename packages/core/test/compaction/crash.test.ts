import { spawn } from 'node:child_process'
import { rmSync } from 'node:fs'
import { resolve } from 'node:path'
import { createInterface } from 'node:readline'
import { createAgent } from '@kode/core'
import type { RecordedRequest } from '@kode/providers/testing'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { bundleForNode } from '../../../../test/children/bundle-for-node.js'
import { say, stalledChatStream } from '../helpers/chat-wire.js'
import { collect, counter, NOW, useHarness } from '../helpers/harness.js'
import { expectValidHistory } from '../helpers/history-checks.js'
import {
  bodyTokens,
  compactionsOf,
  isSummaryRequest,
  readChunk,
  TINY,
  TINY_INPUT_LIMIT,
  toolLoopModel,
} from '../helpers/small-window.js'

let child: string
beforeAll(async () => {
  child = await bundleForNode(resolve(import.meta.dirname, '../processes/compacting-child.ts'))
}, 60_000)
afterAll(() => rmSync(resolve(child, '..'), { recursive: true, force: true }))

describe('a process killed while it compacts', { timeout: 60_000 }, () => {
  const h = useHarness('file')

  test('leaves the session loadable with no compaction record; the next run compacts again and completes', async () => {
    // The first process: a tool loop until the summary request, whose answer never finishes.
    const loop = toolLoopModel(100)
    let summaryAsked!: () => void
    const asked = new Promise<void>((done) => {
      summaryAsked = done
    })
    h().server.handle((request: RecordedRequest, index: number) => {
      if (!isSummaryRequest(request)) return loop(request, index)
      summaryAsked()
      return stalledChatStream({ id: 'sum-cut', steps: [say('Summary: the first chun')] })
    })
    const proc = spawn(process.execPath, [child, h().dir!, h().server.url, 's1'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    const exited = new Promise((done) => proc.on('exit', done))
    const lines: string[] = []
    const started = (async () => {
      for await (const line of createInterface({ input: proc.stdout! })) {
        lines.push(line)
        if (line === 'event compaction_start') return
      }
    })()
    // Killed once the engine announced the compaction and its summary request is in flight.
    await Promise.all([asked, started])
    proc.kill('SIGKILL')
    await exited
    expect(lines.at(-1)).toBe('event compaction_start')

    // Another process: the session loads, valid, with every turn the first one persisted and no
    // trace of the cut summary.
    const store = h().reopenStore()
    const before = await store.read('s1')
    expectValidHistory(before)
    expect(compactionsOf(before)).toEqual([])
    expect(JSON.stringify(before)).not.toContain('the first chun')
    const toolResults = before.filter((r) => 'role' in r && r.role === 'tool').length
    expect(toolResults).toBeGreaterThan(5)

    const next = toolLoopModel(3)
    h().server.handle(next)
    const sent = h().server.requests.length
    const agent = createAgent({
      client: h().client({ model: 'tiny', catalog: TINY }),
      store,
      sessionId: 's1',
      tools: [readChunk],
      system: 'You read logs.',
      now: () => NOW,
      createId: counter('second'),
    })
    const { events, outcome } = await collect(agent.run('Go on'))
    expect(outcome).toMatchObject({ reason: 'completed', text: 'done' })
    // It compacted before its first call, and every request it sent fit the window.
    expect(events.find((e) => e.type === 'compaction_start')).toMatchObject({ reason: 'threshold' })
    const after = await agent.history()
    expectValidHistory(after)
    expect(compactionsOf(after).length).toBeGreaterThanOrEqual(1)
    const requests = h().server.requests.slice(sent)
    expect(requests.filter(isSummaryRequest)).toHaveLength(compactionsOf(after).length)
    for (const request of requests) expect(bodyTokens(request)).toBeLessThanOrEqual(TINY_INPUT_LIMIT)
    // The whole history stays: the first process's tool results are all still there.
    expect(after.filter((r) => 'role' in r && r.role === 'tool').length).toBe(toolResults + 3)
  })
})
