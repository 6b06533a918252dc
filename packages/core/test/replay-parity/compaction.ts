import type { Event } from '@kode/protocol'
import {
  type RecordedRequest,
  type ScriptedResponse,
  type ScriptStep,
  scriptedResponse,
} from '@kode/providers/testing'
import { expect } from 'vitest'
import { overloadedAfterStart } from '../helpers/anthropic-wire.js'
import { chatStream, say, textReply } from '../helpers/chat-wire.js'
import { OVERFLOW } from '../helpers/overflow.js'
import {
  bodyTokens,
  compactionsOf,
  isSummaryRequest,
  readChunk,
  TINY,
  toolLoopModel,
} from '../helpers/small-window.js'
import { readFile } from '../helpers/tools.js'
import { chunkReader, drain, record, type Scenario } from './scenario.js'

/** A server too busy to answer, before any output: the client retries it, and nothing was billed. */
const UNAVAILABLE: ScriptedResponse = {
  status: 503,
  body: JSON.stringify({ error: { message: 'The server is busy.', type: 'server_error' } }),
}

/** Compactions, manual and automatic, saved, failed, interrupted. */
export const compaction: readonly Scenario[] = [
  [
    'a manual compaction between tasks',
    async (h) => {
      const model = toolLoopModel(3)
      h.server.handle((request, index) =>
        model.mainCalls() >= 4 ? textReply('r-after', 'Still here.') : model(request, index),
      )
      const live: Event[] = []
      const agent = record(
        h.createAgent({
          tools: [readFile, readChunk],
          compaction: { keepRecent: 1, summarize: async () => 'Read three chunks.' },
        }),
        live,
      )
      expect((await drain(agent.run('Read the log'))).reason).toBe('completed')
      expect((await agent.compact()).compacted).toBe(true)
      expect((await drain(agent.run('Anything else?'))).reason).toBe('completed')
      return { sessionId: agent.sessionId, live }
    },
  ],
  [
    'automatic compaction in a long tool loop',
    async (h) => {
      h.server.handle(toolLoopModel(40))
      const live: Event[] = []
      const agent = chunkReader(h, live)
      expect((await drain(agent.run('Read the whole log'))).reason).toBe('completed')
      expect(live.some((e) => e.type === 'compaction_end')).toBe(true)
      return { sessionId: agent.sessionId, live }
    },
  ],
  [
    'an automatic compaction whose summarizer throws, then one that succeeds',
    async (h) => {
      h.server.handle(toolLoopModel(30))
      let summaries = 0
      const live: Event[] = []
      const agent = chunkReader(h, live, {
        compaction: {
          summarize: async () => {
            if (++summaries === 1) throw new Error('summarizer down')
            return 'Read chunks so far.'
          },
        },
      })
      expect((await drain(agent.run('Read the whole log'))).reason).toBe('completed')
      expect(live.filter((e) => e.type === 'compaction_end').map((e) => e.compacted)).toEqual([false, true])
      return { sessionId: agent.sessionId, live }
    },
  ],
  [
    'an automatic compaction whose summary is cut at the output limit',
    async (h) => {
      const model = toolLoopModel(30)
      let cut = false
      h.server.handle((request, index) => {
        if (!isSummaryRequest(request) || cut) return model(request, index)
        cut = true
        return chatStream({ id: 'sum-cut', steps: [say('The user asked to read')], finish: 'length' })
      })
      const live: Event[] = []
      const agent = chunkReader(h, live)
      expect((await drain(agent.run('Read the whole log'))).reason).toBe('completed')
      expect(live.filter((e) => e.type === 'compaction_end').map((e) => e.compacted)).toEqual([false, true])
      return { sessionId: agent.sessionId, live }
    },
  ],
  [
    'an automatic compaction whose summary attempt the client retried',
    async (h) => {
      let main = 0
      let summaries = 0
      const summaryRequests: RecordedRequest[] = []
      // Each response reports its request's tokens, so the window fills as the log is read.
      const reply = (id: string, steps: ScriptStep[], request: RecordedRequest) =>
        scriptedResponse('anthropic', {
          id,
          model: 'claude-sonnet-4-5',
          steps,
          usage: { inputTokens: bodyTokens(request), outputTokens: 20 },
        })
      h.server.handle((request) => {
        if (isSummaryRequest(request)) {
          summaryRequests.push(request)
          return ++summaries === 1
            ? overloadedAfterStart('msg_s1', 900)
            : reply(`msg_s${summaries}`, [{ text: 'Read chunks so far.' }], request)
        }
        main++
        const step: ScriptStep =
          main <= 30
            ? { toolCall: { id: `toolu_${main}`, name: 'read_chunk', arguments: { n: main } } }
            : { text: 'done' }
        return reply(`msg_${main}`, [step], request)
      })
      const live: Event[] = []
      const client = h.client({
        api: 'anthropic',
        model: 'claude-sonnet-4-5',
        catalog: { 'claude-sonnet-4-5': TINY.tiny! },
      })
      const agent = chunkReader(h, live, { client })
      expect((await drain(agent.run('Read the whole log'))).reason).toBe('completed')
      // The first summary's record keeps its retried attempt's input with its own.
      const history = await agent.history()
      const [first] = compactionsOf(history)
      expect(first?.usage?.inputTokens).toBe(900 + bodyTokens(summaryRequests[1]!))
      return { sessionId: agent.sessionId, live }
    },
  ],
  [
    'an automatic compaction whose summary request the client retried before any output',
    async (h) => {
      const model = toolLoopModel(30)
      let unavailable = 0
      h.server.handle((request, index) =>
        isSummaryRequest(request) && unavailable++ < 2 ? UNAVAILABLE : model(request, index),
      )
      const live: Event[] = []
      const agent = chunkReader(h, live)
      expect((await drain(agent.run('Read the whole log'))).reason).toBe('completed')
      // Announced inside the compaction, and kept on its record (nothing was billed).
      const retries = live.filter((e) => e.type === 'error' && e.canRetry)
      expect(retries).toHaveLength(2)
      expect(compactionsOf(await agent.history())[0]?.retries).toEqual(
        retries.map((e) => e.type === 'error' && e.errorMessage),
      )
      return { sessionId: agent.sessionId, live }
    },
  ],
  [
    'a manual compaction whose summary the client retried, then cut at the output limit',
    async (h) => {
      const model = toolLoopModel(3)
      let summaries = 0
      h.server.handle((request, index) => {
        if (isSummaryRequest(request))
          return ++summaries === 1
            ? UNAVAILABLE
            : chatStream({ id: 'sum-cut', steps: [say('The user asked to read')], finish: 'length' })
        return model.mainCalls() >= 4 ? textReply('r-after', 'Still here.') : model(request, index)
      })
      const live: Event[] = []
      const agent = record(
        h.createAgent({ tools: [readFile, readChunk], compaction: { keepRecent: 1 } }),
        live,
      )
      expect((await drain(agent.run('Read the log'))).reason).toBe('completed')
      expect(await agent.compact()).toMatchObject({ compacted: false, reason: 'failed' })
      expect((await drain(agent.run('Anything else?'))).reason).toBe('completed')
      expect(live.filter((e) => e.type === 'error' && e.canRetry)).toHaveLength(1)
      return { sessionId: agent.sessionId, live }
    },
  ],
  [
    'an automatic compaction interrupted, then a new task',
    async (h) => {
      const model = toolLoopModel(30)
      h.server.handle((request, index) =>
        model.mainCalls() >= 31 ? textReply('r-after', 'Back.') : model(request, index),
      )
      const live: Event[] = []
      const controller = new AbortController()
      let interrupt = true
      const agent = chunkReader(h, live, {
        compaction: {
          summarize: ({ signal }) => {
            if (!interrupt) return Promise.resolve('Read chunks so far.')
            controller.abort()
            return new Promise<string>((_, reject) =>
              signal.addEventListener('abort', () => reject(signal.reason)),
            )
          },
        },
      })
      expect((await drain(agent.run('Read the whole log', { signal: controller.signal }))).reason).toBe(
        'aborted',
      )
      interrupt = false
      expect((await drain(agent.run('Go on'))).reason).toBe('completed')
      return { sessionId: agent.sessionId, live }
    },
  ],
  ...(['empty', 'interrupted'] as const).map(
    (how): Scenario => [
      `a manual compaction whose summary is ${how}, between tasks`,
      async (h) => {
        const model = toolLoopModel(3)
        h.server.handle((request, index) =>
          model.mainCalls() >= 4 ? textReply('r-after', 'Still here.') : model(request, index),
        )
        const live: Event[] = []
        const controller = new AbortController()
        const agent = record(
          h.createAgent({
            tools: [readFile, readChunk],
            compaction: {
              keepRecent: 1,
              summarize: async () => {
                if (how === 'empty') return ''
                controller.abort()
                return 'Too late.'
              },
            },
          }),
          live,
        )
        expect((await drain(agent.run('Read the log'))).reason).toBe('completed')
        const result = await agent.compact({ signal: controller.signal })
        expect(result).toMatchObject({ compacted: false, reason: how === 'empty' ? 'failed' : 'aborted' })
        expect((await drain(agent.run('Anything else?'))).reason).toBe('completed')
        return { sessionId: agent.sessionId, live }
      },
    ],
  ),
  [
    'a threshold compaction, then an overflow with nothing left to compact',
    async (h) => {
      const model = toolLoopModel(30)
      let summaries = 0
      let overflowed = false
      h.server.handle((request, index) => {
        if (isSummaryRequest(request) && ++summaries === 2)
          return chatStream({ id: 'sum-cut', steps: [say('The user asked to read')], finish: 'length' })
        if (summaries === 1 && !overflowed && !isSummaryRequest(request)) {
          overflowed = true
          return OVERFLOW
        }
        return model(request, index)
      })
      const live: Event[] = []
      const agent = chunkReader(h, live)
      expect((await drain(agent.run('Read the whole log'))).reason).toBe('error')
      expect(live.filter((e) => e.type === 'compaction_end').map((e) => e.compacted)).toEqual([true, false])
      return { sessionId: agent.sessionId, live }
    },
  ],
  [
    'an overflow whose compaction fails',
    async (h) => {
      const model = toolLoopModel(3)
      let overflowed = false
      h.server.handle((request, index) => {
        if (model.mainCalls() < 4) return model(request, index)
        if (!overflowed) {
          overflowed = true
          return OVERFLOW
        }
        return chatStream({ id: 'sum-cut', steps: [say('The user asked to read')], finish: 'length' })
      })
      const live: Event[] = []
      const agent = record(h.createAgent({ tools: [readChunk], compaction: { keepRecent: 1 } }), live)
      expect((await drain(agent.run('Read the log'))).reason).toBe('completed')
      expect((await drain(agent.run('Go on'))).reason).toBe('error')
      expect(live.filter((e) => e.type === 'compaction_end').map((e) => e.compacted)).toEqual([false])
      return { sessionId: agent.sessionId, live }
    },
  ],
]
