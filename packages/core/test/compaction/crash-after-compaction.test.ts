import { checkEventOrder, type Event, type HistoryEvent } from '@kode/protocol'
import type { RecordedRequest } from '@kode/providers/testing'
import { describe, expect, test } from 'vitest'
import { chatStream, say } from '../helpers/chat-wire.js'
import { collect, useHarness } from '../helpers/harness.js'
import { expectValidHistory } from '../helpers/history-checks.js'
import { replayedPart, replayOf, replayThenLive } from '../helpers/replayed.js'
import {
  bodyTokens,
  compactionsOf,
  isSummaryRequest,
  readChunk,
  readChunkSession,
  TINY,
  toolLoopModel,
} from '../helpers/small-window.js'

/**
 * Stores `prefix` as session `id`, as a dead process left it, and has the model answer what comes
 * next: a summary for a summary request, `done` otherwise.
 */
async function leftBehind(
  h: ReturnType<ReturnType<typeof useHarness>>,
  id: string,
  prefix: HistoryEvent[],
): Promise<HistoryEvent[]> {
  await h.store.create({ id })
  await h.store.append(id, prefix)
  let n = 0
  h.server.handle((request: RecordedRequest) =>
    chatStream({
      id: `next-${++n}`,
      steps: [say(isSummaryRequest(request) ? 'Summary.' : 'done')],
      usage: { prompt: bodyTokens(request), completion: 20 },
    }),
  )
  return prefix
}

// A threshold compaction runs in the turn whose model call needs the room, before that call: a
// process that died right after persisting it left that turn open, awaiting its response. The
// replay of the history the next task leaves shows that response in the same turn; the next
// task's events must follow on from the dead one's the same way.

describe('a process that died right after a threshold compaction', { timeout: 60_000 }, () => {
  const h = useHarness()

  /** A session cut right after its first compaction record, as a process killed there leaves it. */
  async function cutAfterCompaction(id: string): Promise<HistoryEvent[]> {
    h().server.handle(toolLoopModel(20))
    const agent = h().createAgent({
      client: h().client({ model: 'tiny', catalog: TINY }),
      tools: [readChunk],
      system: 'You read logs.',
      compaction: { keepRecent: 2 },
    })
    expect((await collect(agent.run('Read the log'))).outcome.reason).toBe('completed')
    const full = await agent.history()
    const [first] = compactionsOf(full)
    expect(first?.reason).toBe('threshold')
    const prefix = full.slice(0, full.indexOf(first!) + 1)
    return leftBehind(h(), id, prefix)
  }

  test.each(['continue', 'run'] as const)(
    '%s: its events go on from the open turn, as the replay of the history it leaves shows them',
    async (mode) => {
      const prefix = await cutAfterCompaction(`cut-${mode}`)
      const agent = h().createAgent({
        sessionId: `cut-${mode}`,
        client: h().client({ model: 'tiny', catalog: TINY }),
        tools: [readChunk],
        system: 'You read logs.',
        compaction: { keepRecent: 2 },
      })
      const live = await collect(mode === 'continue' ? agent.continue() : agent.run('Go on'))
      expect(live.outcome.reason).toBe('completed')
      const history = await agent.history()
      expectValidHistory(history)
      // What a watcher saw: the dead process's events (its turn still open), then this task's.
      const watched = replayThenLive(prefix, `cut-${mode}`, live.events)
      expect(checkEventOrder(watched)).toEqual([])
      expect(replayedPart(watched)).toEqual(replayOf(history, `cut-${mode}`))
    },
  )
})

describe("a process that died right after a retry's notice", () => {
  const h = useHarness()

  test.each(['continue', 'run'] as const)(
    '%s: its events go on from the open turn, as the replay of the history it leaves shows them',
    async (mode) => {
      const rateLimited = {
        status: 429,
        headers: { 'retry-after': '0' },
        body: JSON.stringify({ error: { message: 'Rate limit reached', type: 'rate_limit_exceeded' } }),
      }
      h().server.enqueue(rateLimited, chatStream({ id: 'r1', steps: [say('Hello.')] }))
      const first = h().createAgent()
      expect((await collect(first.run('Hi'))).outcome.reason).toBe('completed')
      const full = await first.history()
      const notice = full.findIndex((r) => !('role' in r) && r.type === 'error' && r.retry === true)
      expect(notice).toBeGreaterThan(0)
      const prefix = full.slice(0, notice + 1)
      const id = `cut-${mode}`
      await h().store.create({ id })
      await h().store.append(id, prefix)
      h().server.enqueue(chatStream({ id: 'r2', steps: [say('Hello again.')] }))
      const agent = h().createAgent({ sessionId: id })
      const live = await collect(mode === 'continue' ? agent.continue() : agent.run('Go on'))
      expect(live.outcome.reason).toBe('completed')
      const history = await agent.history()
      expectValidHistory(history)
      const watched = replayThenLive(prefix, id, live.events)
      expect(checkEventOrder(watched)).toEqual([])
      expect(replayedPart(watched)).toEqual(replayOf(history, id))
    },
  )
})

describe('a process that died right after an interrupted threshold compaction was marked', () => {
  const h = useHarness()

  test.each(['continue', 'run'] as const)(
    '%s: its events go on from the open turn, as the replay of the history it leaves shows them',
    async (mode) => {
      const id = `cut-${mode}`
      await h().store.create({ id: 'long' })
      await h().store.append(
        'long',
        readChunkSession(6, (n) => `chunk ${n}: ${'x'.repeat(2_000)}`, { id: 'done', text: 'Read them.' }),
      )
      const options = {
        client: h().client({ model: 'tiny', catalog: TINY }),
        tools: [readChunk],
        compaction: { keepRecent: 1, summarize: async () => 'Six chunks were read.' },
      }
      const controller = new AbortController()
      const interrupted = h().createAgent({
        ...options,
        sessionId: 'long',
        compaction: {
          keepRecent: 1,
          summarize: ({ signal }) => {
            controller.abort()
            return new Promise<string>((_, reject) =>
              signal.addEventListener('abort', () => reject(signal.reason)),
            )
          },
        },
      })
      expect((await interrupted.run('Go on', { signal: controller.signal }).done).reason).toBe('aborted')
      const full = await interrupted.history()
      const marker = full.findIndex(
        (r) => !('role' in r) && r.type === 'interrupt' && r.compaction !== undefined,
      )
      expect(marker).toBeGreaterThan(0)
      const prefix = full.slice(0, marker + 1)
      await h().store.create({ id })
      await h().store.append(id, prefix)
      h().server.enqueue(chatStream({ id: 'r1', steps: [say('done')] }))
      const agent = h().createAgent({ ...options, sessionId: id })
      const live = await collect(mode === 'continue' ? agent.continue() : agent.run('Go on again'))
      expect(live.outcome.reason).toBe('completed')
      const history = await agent.history()
      expectValidHistory(history)
      const watched = replayThenLive(prefix, id, live.events)
      expect(checkEventOrder(watched)).toEqual([])
      expect(replayedPart(watched)).toEqual(replayOf(history, id))
    },
  )
})

// A manual compaction of a session whose process died mid-turn runs between that dead task and
// the next one: the next task still carries the dead turn on (or closes it), so the compaction's
// events come inside that turn, live and in replay.
describe('a manual compaction of a session a dead process left mid-turn', { timeout: 60_000 }, () => {
  const h = useHarness()

  /** A session cut as a process killed there leaves it: after a response or a threshold compaction. */
  async function deadSession(id: string, cut: 'call' | 'threshold'): Promise<HistoryEvent[]> {
    h().server.handle(toolLoopModel(20))
    const first = h().createAgent({
      client: h().client({ model: 'tiny', catalog: TINY }),
      tools: [readChunk],
      compaction: { keepRecent: 2 },
    })
    expect((await collect(first.run('Read the log'))).outcome.reason).toBe('completed')
    const full = await first.history()
    const [compaction] = compactionsOf(full)
    // The first response after the first compaction: its call had run, its result not persisted.
    const at =
      cut === 'threshold'
        ? full.indexOf(compaction!)
        : full.findIndex((r, i) => i > full.indexOf(compaction!) && 'role' in r && r.role === 'assistant')
    const prefix = full.slice(0, at + 1)
    return leftBehind(h(), id, prefix)
  }

  test.each([
    ['call', 'continue'],
    ['call', 'run'],
    ['threshold', 'continue'],
    ['threshold', 'run'],
  ] as const)('cut after a %s, then %s: the events go on as the replay shows them', async (cut, mode) => {
    const id = `cut-${cut}-${mode}`
    const prefix = await deadSession(id, cut)
    const agent = h().createAgent({
      sessionId: id,
      client: h().client({ model: 'tiny', catalog: TINY }),
      tools: [readChunk],
      compaction: { keepRecent: 1 },
    })
    const live: Event[] = []
    agent.events.on('event', (event) => live.push(event))
    expect((await agent.compact()).compacted).toBe(true)
    const { outcome } = await collect(mode === 'continue' ? agent.continue() : agent.run('Go on'))
    expect(outcome.reason).toBe('completed')
    const history = await agent.history()
    expectValidHistory(history)
    const watched = replayThenLive(prefix, id, live)
    expect(checkEventOrder(watched)).toEqual([])
    expect(replayedPart(watched)).toEqual(replayOf(history, id))
  })
})
