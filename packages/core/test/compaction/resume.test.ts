import { appendFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { createAgent, SUMMARY_PREFIX } from '@kode/core'
import { describe, expect, test } from 'vitest'
import { textReply } from '../helpers/chat-wire.js'
import { collect, counter, NOW, useHarness } from '../helpers/harness.js'
import {
  chatMessages,
  compactionsOf,
  isSummaryRequest,
  readChunk,
  TINY,
  toolLoopModel,
} from '../helpers/small-window.js'

describe('resuming a compacted session', { timeout: 60_000 }, () => {
  const h = useHarness('file')

  test('sends the compacted view: system prompt, summary, kept turns, then the new input', async () => {
    h().server.handle(toolLoopModel(40))
    const first = h().createAgent({
      client: h().client({ model: 'tiny', catalog: TINY }),
      tools: [readChunk],
      system: 'You read logs.',
    })
    await first.run('Read the whole log').done
    const history = await first.history()
    const record = compactionsOf(history).at(-1)
    if (!record) throw new Error('expected a compaction')
    const kept = history.slice(history.findIndex((r) => r.id === record.firstKeptId))

    // Another process: a new store over the same directory, a new agent on the session.
    await h().store.close()
    const before = h().server.requests.length
    h().server.handle(undefined)
    h().server.enqueue(textReply('again', 'ok'))
    const second = createAgent({
      client: h().client({ model: 'tiny', catalog: TINY }),
      store: h().reopenStore(),
      sessionId: first.sessionId,
      tools: [readChunk],
      now: () => NOW,
      createId: counter('second'),
    })
    const { outcome } = await collect(second.run('and now?'))
    expect(outcome.reason).toBe('completed')
    const sent = chatMessages(h().server.requests[before]!)
    expect(sent[0]).toEqual({ role: 'system', content: 'You read logs.' })
    expect(sent[1]).toEqual({ role: 'user', content: SUMMARY_PREFIX + record.summary })
    const keptCalls = kept.filter((r) => 'role' in r && r.role === 'tool').length
    expect(sent.filter((m) => m.role === 'tool')).toHaveLength(keptCalls)
    expect(sent.at(-1)).toEqual({ role: 'user', content: 'and now?' })
    expect(JSON.stringify(sent)).not.toContain('Read the whole log')
  })
})

describe('crash safety', { timeout: 60_000 }, () => {
  const h = useHarness('file')

  test('an interrupted summary persists nothing, and a torn compaction line is ignored: the next run compacts again', async () => {
    const model = toolLoopModel(60)
    h().server.handle(model)
    let release: (() => void) | undefined
    const first = h().createAgent({
      client: h().client({ model: 'tiny', catalog: TINY }),
      tools: [readChunk],
      compaction: {
        // The summary never comes: the run is interrupted while it is being written.
        summarize: ({ signal }) =>
          new Promise((_, reject) => {
            release = () => reject(new Error('never'))
            signal.addEventListener('abort', () => reject(signal.reason))
          }),
      },
    })
    const controller = new AbortController()
    const run = first.run('Read the whole log', { signal: controller.signal })
    const events = []
    for await (const event of run) {
      events.push(event)
      if (event.type === 'compaction_start') controller.abort()
    }
    expect((await run.done).reason).toBe('aborted')
    expect(events.find((e) => e.type === 'compaction_end')).toMatchObject({ compacted: false })
    expect(compactionsOf(await first.history())).toEqual([])
    void release

    // What a crash in the middle of writing a compaction record leaves: half a line.
    const dir = h().dir!
    const file = join(
      dir,
      first.sessionId,
      readdirSync(join(dir, first.sessionId)).find((f) => f.endsWith('.jsonl'))!,
    )
    appendFileSync(file, '{"v":3,"type":"compaction","id":"torn","createdAt":1,"summary":"half a sum')

    await h().store.close()
    const second = createAgent({
      client: h().client({ model: 'tiny', catalog: TINY }),
      store: h().reopenStore(),
      sessionId: first.sessionId,
      tools: [readChunk],
      now: () => NOW,
      createId: counter('second'),
    })
    const resumed = await collect(second.run('go on'))
    expect(resumed.outcome.reason).toBe('completed')
    expect(resumed.events[0]).toMatchObject({ type: 'task_start' })
    const history = await second.history()
    const records = compactionsOf(history)
    expect(records.length).toBeGreaterThanOrEqual(1)
    expect(records.every((r) => r.id !== 'torn')).toBe(true)
    expect(h().server.requests.filter(isSummaryRequest).length).toBe(records.length)
  })
})
