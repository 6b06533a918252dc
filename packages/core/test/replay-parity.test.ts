import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { type Agent, defineSubAgent, defineTool } from '@kode/core'
import type { Event, HistoryEvent } from '@kode/protocol'
import {
  type RecordedRequest,
  type ScriptedResponse,
  type ScriptStep,
  scriptedResponse,
} from '@kode/providers/testing'
import { exportSessionHtml, replaySession } from '@kode/session'
import { Type } from '@sinclair/typebox'
import { describe, expect, test } from 'vitest'
import { anthropicStream, overloadedAfterStart } from './helpers/anthropic-wire.js'
import { call, chatStream, say, stalledChatStream, textReply, think } from './helpers/chat-wire.js'
import { collect, gate, type Harness, useHarness } from './helpers/harness.js'
import { expectOrdered } from './helpers/history-checks.js'
import { replayedPart } from './helpers/replayed.js'
import {
  bodyTokens,
  compactionsOf,
  isSummaryRequest,
  readChunk,
  TINY,
  toolLoopModel,
} from './helpers/small-window.js'
import { readFile } from './helpers/tools.js'

// A parity sweep: for each scenario a real agent runs against a scripted model, and the replay of
// the session it stored must be the events it emitted live, once the differences docs/sessions.md
// ("Replay") documents are taken out: exactly those, nothing looser.

type Messages = { role: string; content?: unknown }[]
const messagesOf = (request: RecordedRequest) => (request.body as { messages: Messages }).messages

/** What a scenario leaves: the session, every event its agents emitted (all tasks, in order). */
interface Ran {
  sessionId: string
  live: Event[]
  /**
   * Sub-agents ran at the same time: replay shows each one's events as a block (see
   * `childrenInBlocks`), which the scenario checks they were not live.
   */
  concurrent?: true
}

/** Records every event `agent` emits from now on into `live`. */
function record(agent: Agent, live: Event[]): Agent {
  agent.events.on('event', (event) => live.push(event))
  return agent
}

/** An agent on the small-window model that reads the log chunk by chunk, its events recorded in `live`. */
function chunkReader(h: Harness, live: Event[], options: Parameters<Harness['createAgent']>[0] = {}): Agent {
  return record(
    h.createAgent({
      client: h.client({ model: 'tiny', catalog: TINY }),
      tools: [readChunk],
      maxTurns: 60,
      ...options,
    }),
    live,
  )
}

/** Drains a run (its events are recorded by the listener) and returns how it ended. */
async function drain(run: ReturnType<Agent['run']>) {
  return (await collect(run)).outcome
}

const fails = defineTool({
  name: 'fails',
  description: 'Always throws',
  parameters: Type.Object({}),
  execute: () => {
    throw new Error('disk on fire')
  },
})

const needsOk = defineTool({
  name: 'write_file',
  description: 'Writes a file',
  parameters: Type.Object({ path: Type.String() }),
  needsApproval: true,
  execute: ({ path }) => `wrote ${path}`,
})

const researcher = defineSubAgent({
  name: 'researcher',
  description: 'Researches',
  system: 'You research.',
  tools: [readFile],
})

/** How many retries a history keeps a record of (those whose attempt its provider billed). */
const billedRetries = (history: readonly HistoryEvent[]) =>
  history.filter((r) => !('role' in r) && r.type === 'error' && r.canRetry === true && r.usage).length

/** A stream cut (connection reset) after roughly the first third of its bytes. */
function cutStream(id: string, text: string): ScriptedResponse {
  const full = chatStream({ id, steps: [say(text)] })
  const bytes = (full.body as string[]).join('').length
  return { ...full, resetAfterBytes: Math.floor(bytes / 3) }
}

/** Answers a text reply once the last message is a tool result, else `first`. */
function toolsThenText(first: ScriptedResponse, text = 'All done.') {
  return (request: RecordedRequest): ScriptedResponse =>
    messagesOf(request).at(-1)?.role === 'tool' ? textReply('r-end', text) : first
}

/** The recorded Chat Completions context-overflow error (the providers' tests check its classification). */
const OVERFLOW: ScriptedResponse = {
  status: 400,
  body: readFileSync(
    join(import.meta.dirname, '../../providers/test/fixtures/errors/context-overflow/openai-chat.400.json'),
    'utf8',
  ),
}

type Scenario = readonly [string, (h: Harness) => Promise<Ran>]

const SCENARIOS: readonly Scenario[] = [
  [
    'a plain text answer',
    async (h) => {
      h.server.enqueue(chatStream({ id: 'r1', steps: [think('Easy.'), say('Hello there.')] }))
      const live: Event[] = []
      const agent = record(h.createAgent(), live)
      expect((await drain(agent.run('Hi'))).reason).toBe('completed')
      return { sessionId: agent.sessionId, live }
    },
  ],
  [
    'parallel tool calls',
    async (h) => {
      h.server.handle(
        toolsThenText(
          chatStream({
            id: 'r1',
            steps: [
              say('Reading.'),
              call('c1', 'read_file', { path: 'a' }),
              call('c2', 'read_file', { path: 'b' }),
            ],
          }),
        ),
      )
      const live: Event[] = []
      const agent = record(h.createAgent({ tools: [readFile] }), live)
      expect((await drain(agent.run('Read a and b'))).reason).toBe('completed')
      return { sessionId: agent.sessionId, live }
    },
  ],
  [
    'a failing tool and a call with invalid arguments',
    async (h) => {
      h.server.handle(
        toolsThenText(
          chatStream({ id: 'r1', steps: [call('c1', 'fails', {}), call('c2', 'read_file', { nope: 1 })] }),
        ),
      )
      const live: Event[] = []
      const agent = record(h.createAgent({ tools: [readFile, fails] }), live)
      expect((await drain(agent.run('Try'))).reason).toBe('completed')
      return { sessionId: agent.sessionId, live }
    },
  ],
  [
    'a provider error before any output',
    async (h) => {
      h.server.enqueue({
        status: 400,
        body: JSON.stringify({ error: { message: 'Invalid model', type: 'invalid_request_error' } }),
      })
      const live: Event[] = []
      const agent = record(h.createAgent(), live)
      expect((await drain(agent.run('Hi'))).reason).toBe('error')
      return { sessionId: agent.sessionId, live }
    },
  ],
  [
    'a provider error after tool results, in the next turn',
    async (h) => {
      h.server.enqueue(chatStream({ id: 'r1', steps: [call('c1', 'read_file', { path: 'a' })] }), {
        status: 400,
        body: JSON.stringify({ error: { message: 'Invalid model', type: 'invalid_request_error' } }),
      })
      const live: Event[] = []
      const agent = record(h.createAgent({ tools: [readFile] }), live)
      expect((await drain(agent.run('Read a'))).reason).toBe('error')
      return { sessionId: agent.sessionId, live }
    },
  ],
  [
    'an error after output, retried',
    async (h) => {
      const text = 'The quick brown fox jumps over the lazy dog and keeps on running far away.'
      h.server.enqueue(cutStream('r1', text), chatStream({ id: 'r2', steps: [say(text)] }))
      const live: Event[] = []
      const agent = record(h.createAgent(), live)
      expect((await drain(agent.run('Tell me'))).reason).toBe('completed')
      return { sessionId: agent.sessionId, live }
    },
  ],
  [
    'an error after output, retries run out',
    async (h) => {
      const text = 'A long answer that will be cut off before it can finish streaming to the client.'
      h.server.enqueue(cutStream('r1', text), cutStream('r2', text))
      const live: Event[] = []
      const agent = record(h.createAgent({ retry: { maxAttempts: 2, baseDelayMs: 1 } }), live)
      expect((await drain(agent.run('Go'))).reason).toBe('error')
      return { sessionId: agent.sessionId, live }
    },
  ],
  [
    'an overloaded error after the response started, retried by the client, in a later turn',
    async (h) => {
      h.server.enqueue(
        anthropicStream('msg_1', [
          { text: 'Reading.' },
          { toolUse: { id: 'toolu_1', name: 'read_file', input: { path: 'a' } } },
        ]),
        overloadedAfterStart('msg_2', 700),
        overloadedAfterStart('msg_3', 700),
        anthropicStream('msg_4', [{ text: 'It says hi.' }]),
      )
      const live: Event[] = []
      const client = h.client({ api: 'anthropic', model: 'claude-sonnet-4-5' })
      const agent = record(h.createAgent({ client, tools: [readFile] }), live)
      expect((await drain(agent.run('Read a'))).reason).toBe('completed')
      expect(billedRetries(await agent.history())).toBe(2)
      return { sessionId: agent.sessionId, live }
    },
  ],
  [
    'an overloaded error after the response started, client retries run out',
    async (h) => {
      h.server.enqueue(overloadedAfterStart('msg_1', 700), overloadedAfterStart('msg_2', 700))
      const live: Event[] = []
      const client = h.client({
        api: 'anthropic',
        model: 'claude-sonnet-4-5',
        retry: { maxAttempts: 2, baseDelayMs: 1 },
      })
      const agent = record(h.createAgent({ client }), live)
      expect((await drain(agent.run('Go'))).reason).toBe('error')
      expect(billedRetries(await agent.history())).toBe(1)
      return { sessionId: agent.sessionId, live }
    },
  ],
  [
    'an abort before the run starts',
    async (h) => {
      h.server.handle(() => textReply('r2', 'Back.'))
      const live: Event[] = []
      const agent = record(h.createAgent(), live)
      expect((await drain(agent.run('never mind', { signal: AbortSignal.abort() }))).reason).toBe('aborted')
      expect((await drain(agent.run('again'))).reason).toBe('completed')
      return { sessionId: agent.sessionId, live }
    },
  ],
  [
    'an abort before any output (the request in flight)',
    async (h) => {
      h.server.enqueue(stalledChatStream({ id: 'r1', steps: [] }), textReply('r2', 'Back.'))
      const live: Event[] = []
      const agent = record(h.createAgent(), live)
      const controller = new AbortController()
      agent.events.on('turn_start', () => controller.abort())
      expect((await drain(agent.run('Hi', { signal: controller.signal }))).reason).toBe('aborted')
      return { sessionId: agent.sessionId, live }
    },
  ],
  [
    'an abort before the output of a later turn',
    async (h) => {
      h.server.enqueue(
        chatStream({ id: 'r1', steps: [call('c1', 'read_file', { path: 'a' })] }),
        stalledChatStream({ id: 'r2', steps: [] }),
      )
      const live: Event[] = []
      const agent = record(h.createAgent({ tools: [readFile] }), live)
      const controller = new AbortController()
      let turns = 0
      agent.events.on('turn_start', () => {
        if (++turns === 2) controller.abort()
      })
      expect((await drain(agent.run('Read a', { signal: controller.signal }))).reason).toBe('aborted')
      return { sessionId: agent.sessionId, live }
    },
  ],
  [
    'an abort while streaming',
    async (h) => {
      h.server.enqueue(
        chatStream(
          { id: 'r1', steps: [think('Thinking hard about this.'), say('Partial answer that goes on.')] },
          { chunkDelayMs: 1 },
        ),
        textReply('r2', 'Back.'),
      )
      const live: Event[] = []
      const agent = record(h.createAgent(), live)
      const controller = new AbortController()
      const stop = () => controller.abort()
      agent.events.on('assistant_text_delta', stop)
      expect((await drain(agent.run('q', { signal: controller.signal }))).reason).toBe('aborted')
      agent.events.off('assistant_text_delta', stop)
      expect((await drain(agent.run('again'))).reason).toBe('completed')
      return { sessionId: agent.sessionId, live }
    },
  ],
  [
    'an abort while streaming, after the provider reported usage',
    async (h) => {
      // Anthropic reports the input tokens as the message starts: the partial response has usage.
      h.server.enqueue(
        scriptedResponse('anthropic', {
          id: 'msg_1',
          model: 'claude-sonnet-4-5',
          steps: [{ text: 'Partial answer that goes on.' }],
          stallAfter: 1,
        }),
      )
      const live: Event[] = []
      const agent = record(
        h.createAgent({ client: h.client({ api: 'anthropic', model: 'claude-sonnet-4-5' }) }),
        live,
      )
      const controller = new AbortController()
      agent.events.on('assistant_text_delta', () => controller.abort())
      expect((await drain(agent.run('q', { signal: controller.signal }))).reason).toBe('aborted')
      expect(live.filter((e) => e.type === 'usage')).toHaveLength(1)
      return { sessionId: agent.sessionId, live }
    },
  ],
  [
    'an abort during a tool call',
    async (h) => {
      const started = gate()
      const hang = defineTool({
        name: 'hang',
        description: 'Runs until interrupted',
        parameters: Type.Object({}),
        execute: () => {
          started.open()
          return new Promise<string>(() => {})
        },
      })
      h.server.enqueue(
        chatStream({ id: 'r1', steps: [say('Working.'), call('c1', 'hang', {}), call('c2', 'hang', {})] }),
      )
      const live: Event[] = []
      const agent = record(h.createAgent({ tools: [hang] }), live)
      const controller = new AbortController()
      const run = agent.run('go', { signal: controller.signal })
      void started.promise.then(() => controller.abort())
      expect((await drain(run)).reason).toBe('aborted')
      return { sessionId: agent.sessionId, live }
    },
  ],
  ...(['approved', 'denied'] as const).map(
    (decision): Scenario => [
      `an approval requested, then ${decision}`,
      async (h) => {
        h.server.handle(
          toolsThenText(
            chatStream({
              id: 'r1',
              steps: [
                say('On it.'),
                call('c1', 'write_file', { path: 'a' }),
                call('c2', 'read_file', { path: 'b' }),
              ],
            }),
          ),
        )
        const live: Event[] = []
        const agent = record(h.createAgent({ tools: [needsOk, readFile] }), live)
        expect((await drain(agent.run('Write a, read b'))).reason).toBe('awaiting_approval')
        const approvals = [{ toolCallId: 'c1', approved: decision === 'approved' }]
        expect((await drain(agent.continue({ approvals }))).reason).toBe('completed')
        return { sessionId: agent.sessionId, live }
      },
    ],
  ),
  [
    'an approval requested, then approved by a new agent after a restart',
    async (h) => {
      h.server.handle(
        toolsThenText(chatStream({ id: 'r1', steps: [call('c1', 'write_file', { path: 'a' })] })),
      )
      const live: Event[] = []
      const agent = record(h.createAgent({ tools: [needsOk] }), live)
      expect((await drain(agent.run('Write a'))).reason).toBe('awaiting_approval')
      const later = record(
        h.createAgent({ store: h.reopenStore(), sessionId: agent.sessionId, tools: [needsOk] }),
        live,
      )
      const approvals = [{ toolCallId: 'c1', approved: true }]
      expect((await drain(later.continue({ approvals }))).reason).toBe('completed')
      return { sessionId: agent.sessionId, live }
    },
  ],
  [
    'steering during a tool and while the model answers',
    async (h) => {
      h.server.enqueue(
        chatStream({ id: 'r1', steps: [call('c1', 'read_file', { path: 'a' })] }),
        textReply('r2', 'Read a.'),
        textReply('r3', 'Lu a.'),
      )
      const live: Event[] = []
      const agent = record(h.createAgent({ tools: [readFile] }), live)
      let steered = 0
      agent.events.on('tool_call', () => {
        if (steered++ === 0) agent.steer('Also look at b.')
      })
      agent.events.on('assistant_text_delta', () => {
        if (steered++ === 1) agent.steer('Say it in French too.')
      })
      expect((await drain(agent.run('Read a'))).reason).toBe('completed')
      return { sessionId: agent.sessionId, live }
    },
  ],
  [
    'structured output with a correction',
    async (h) => {
      h.server.enqueue(textReply('r1', '{"city":"Oslo"}'), textReply('r2', '{"city":"Oslo","celsius":4}'))
      const live: Event[] = []
      const agent = record(h.createAgent(), live)
      const Weather = Type.Object(
        { city: Type.String(), celsius: Type.Number() },
        { additionalProperties: false },
      )
      expect((await drain(agent.run('Weather in Oslo?', { output: Weather }))).reason).toBe('completed')
      return { sessionId: agent.sessionId, live }
    },
  ],
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
  [
    'a sub-agent',
    async (h) => {
      h.server.handle((request) => {
        const messages = messagesOf(request)
        const last = messages.at(-1)!
        if (messages[0]?.content === 'You research.') {
          if (last.role === 'tool') return textReply('r-child-2', 'a says hi')
          return chatStream({ id: 'r-child-1', steps: [call('k1', 'read_file', { path: 'a' })] })
        }
        if (last.role === 'tool') return textReply('r-parent-2', 'The researcher says hi.')
        return chatStream({ id: 'r-parent-1', steps: [call('p1', 'researcher', { prompt: 'Read a' })] })
      })
      const live: Event[] = []
      const agent = record(h.createAgent({ tools: [researcher] }), live)
      expect((await drain(agent.run('Ask the researcher'))).reason).toBe('completed')
      return { sessionId: agent.sessionId, live }
    },
  ],
  [
    'a sub-agent stopped at its time limit',
    async (h) => {
      const slow = defineSubAgent({
        name: 'slow',
        description: 'Reports, slowly',
        system: 'You report.',
        timeoutMs: 300,
      })
      h.server.handle((request) => {
        const messages = messagesOf(request)
        if (messages[0]?.content === 'You report.')
          return stalledChatStream({ id: 'r-child', steps: [say('Reporting')] })
        if (messages.at(-1)!.role === 'tool') return textReply('r-parent-2', 'It took too long.')
        return chatStream({ id: 'r-parent-1', steps: [call('p1', 'slow', { prompt: 'cats' })] })
      })
      const live: Event[] = []
      const agent = record(h.createAgent({ tools: [slow] }), live)
      expect((await drain(agent.run('Report on cats'))).reason).toBe('completed')
      return { sessionId: agent.sessionId, live }
    },
  ],
  ...(['streams', 'runs a tool'] as const).map(
    (when): Scenario => [
      `a sub-agent interrupted by the user while it ${when}`,
      async (h) => {
        h.server.handle((request) => {
          const messages = messagesOf(request)
          if (messages[0]?.content === 'You research.') {
            if (when === 'streams') return stalledChatStream({ id: 'r-child', steps: [say('Looking')] })
            return chatStream({ id: 'r-child', steps: [call('k1', 'hang', {})] })
          }
          if (messages.at(-1)?.content === 'Again?') return textReply('r-parent-2', 'Back.')
          return chatStream({ id: 'r-parent-1', steps: [call('p1', 'researcher', { prompt: 'Read a' })] })
        })
        const hang = defineTool({
          name: 'hang',
          description: 'Runs until interrupted',
          parameters: Type.Object({}),
          execute: () => new Promise<string>(() => {}),
        })
        const child = defineSubAgent({
          name: 'researcher',
          description: 'Researches',
          system: 'You research.',
          tools: [hang],
        })
        const live: Event[] = []
        const agent = record(h.createAgent({ tools: [child] }), live)
        const controller = new AbortController()
        const trigger = when === 'streams' ? 'assistant_text_delta' : 'tool_call'
        const stop = (event: Event) => {
          if (event.sessionId !== agent.sessionId && event.type === trigger) controller.abort()
        }
        agent.events.on('event', stop)
        expect((await drain(agent.run('Ask the researcher', { signal: controller.signal }))).reason).toBe(
          'aborted',
        )
        agent.events.off('event', stop)
        expect((await drain(agent.run('Again?'))).reason).toBe('completed')
        return { sessionId: agent.sessionId, live }
      },
    ],
  ),
  [
    'a call that ran two sub-agents, interrupted in the second',
    async (h) => {
      h.server.handle((request) => {
        const messages = messagesOf(request)
        if (messages[0]?.content === 'You research.') {
          if (messages[1]?.content === 'first') return textReply('r-child-1', 'First done.')
          return stalledChatStream({ id: 'r-child-2', steps: [say('Looking')] })
        }
        if (messages.at(-1)?.content === 'Again?') return textReply('r-parent-2', 'Back.')
        return chatStream({ id: 'r-parent-1', steps: [call('p1', 'fan_out', {})] })
      })
      const spec = { name: 'researcher', system: 'You research.' }
      const fanOut = defineTool({
        name: 'fan_out',
        description: 'Runs two researchers, one after the other',
        parameters: Type.Object({}),
        execute: async (_args, ctx) => {
          await ctx.runSubAgent(spec, 'first')
          await ctx.runSubAgent(spec, 'second')
          return 'both done'
        },
      })
      const live: Event[] = []
      const agent = record(h.createAgent({ tools: [fanOut] }), live)
      const controller = new AbortController()
      const started: string[] = []
      const stop = (event: Event) => {
        if (event.type === 'task_start' && event.subAgentState) started.push(event.sessionId)
        if (event.sessionId === started[1] && event.type === 'assistant_text_delta') controller.abort()
      }
      agent.events.on('event', stop)
      expect((await drain(agent.run('Ask twice', { signal: controller.signal }))).reason).toBe('aborted')
      agent.events.off('event', stop)
      const children = live.filter((e) => e.type === 'task_start' && e.subAgentState).map((e) => e.sessionId)
      expect(children).toHaveLength(2)
      expect(live.find((e) => e.type === 'tool_result' && e.sessionId === agent.sessionId)).toMatchObject({
        uiExtra: { type: 'session', sessionId: children[0], moreSessionIds: [children[1]] },
      })
      // The export nests both under the call, in the order they started, batched or not.
      for (const batchSize of [undefined, 1]) {
        const page = await exportSessionHtml(h.store, agent.sessionId, { batchSize })
        const nested = children.map((id) => page.indexOf(`Sub-agent session <code>${id}</code>`))
        expect(nested[0]).toBeGreaterThan(-1)
        expect(nested[1]).toBeGreaterThan(nested[0]!)
      }
      expect((await drain(agent.run('Again?'))).reason).toBe('completed')
      return { sessionId: agent.sessionId, live }
    },
  ],
  [
    'a custom tool that ran two sub-agents and returned without linking them',
    async (h) => {
      h.server.handle((request) => {
        const messages = messagesOf(request)
        if (messages[0]?.content === 'You research.') {
          return textReply(`r-child-${String(messages[1]?.content)}`, `${String(messages[1]?.content)} done.`)
        }
        if (messages.at(-1)?.role === 'tool') return textReply('r-parent-2', 'Both done.')
        return chatStream({ id: 'r-parent-1', steps: [call('p1', 'fan_out', {})] })
      })
      const spec = { name: 'researcher', system: 'You research.' }
      const fanOut = defineTool({
        name: 'fan_out',
        description: 'Runs two researchers, one after the other',
        parameters: Type.Object({}),
        execute: async (_args, ctx) => {
          const first = await ctx.runSubAgent(spec, 'first')
          const second = await ctx.runSubAgent(spec, 'second')
          return `${first.text} ${second.text}`
        },
      })
      const live: Event[] = []
      const agent = record(h.createAgent({ tools: [fanOut] }), live)
      expect((await drain(agent.run('Ask twice'))).reason).toBe('completed')
      const children = live.filter((e) => e.type === 'task_start' && e.subAgentState).map((e) => e.sessionId)
      expect(children).toHaveLength(2)
      // The engine linked both, in the order they started, with the first one's accounting.
      expect(live.find((e) => e.type === 'tool_result' && e.sessionId === agent.sessionId)).toMatchObject({
        status: 'success',
        uiExtra: { type: 'session', sessionId: children[0], moreSessionIds: [children[1]] },
        taskMetadata: { sessionId: children[0] },
      })
      return { sessionId: agent.sessionId, live }
    },
  ],
  ...(['one call', 'sibling calls'] as const).map(
    (of): Scenario => [
      `sub-agents of ${of} that ran at the same time`,
      async (h) => {
        h.server.handle((request) => {
          const messages = messagesOf(request)
          if (messages[0]?.content === 'You research.') {
            const topic = String(messages[1]?.content)
            const steps =
              messages.at(-1)?.role === 'tool'
                ? [say(`Report on ${topic}.`)]
                : [call(`k-${topic}`, 'read_file', { path: topic })]
            return chatStream({ id: `r-${topic}-${messages.length}`, steps }, { chunkDelayMs: 2 })
          }
          if (messages.at(-1)?.role === 'tool') return textReply('r-parent-2', 'Both in.')
          const calls =
            of === 'one call'
              ? [call('p1', 'both', {})]
              : [call('p1', 'researcher', { prompt: 'cats' }), call('p2', 'researcher', { prompt: 'dogs' })]
          return chatStream({ id: 'r-parent-1', steps: calls })
        })
        const spec = { name: 'researcher', system: 'You research.', tools: [readFile] }
        const both = defineTool({
          name: 'both',
          description: 'Runs two researchers at once',
          parameters: Type.Object({}),
          execute: async (_args, ctx) => {
            const outcomes = await Promise.all(['cats', 'dogs'].map((topic) => ctx.runSubAgent(spec, topic)))
            return outcomes.map((outcome) => outcome.text).join(' ')
          },
        })
        const live: Event[] = []
        const agent = record(h.createAgent({ tools: [both, researcher] }), live)
        expect((await drain(agent.run('Research cats and dogs'))).reason).toBe('completed')
        return { sessionId: agent.sessionId, live, concurrent: true }
      },
    ],
  ),
  [
    'max turns reached',
    async (h) => {
      let n = 0
      h.server.handle(() =>
        chatStream({ id: `r${++n}`, steps: [call(`c${n}`, 'read_file', { path: `f${n}` })] }),
      )
      const live: Event[] = []
      const agent = record(h.createAgent({ tools: [readFile], maxTurns: 2 }), live)
      expect((await drain(agent.run('Keep reading'))).reason).toBe('max_turns')
      return { sessionId: agent.sessionId, live }
    },
  ],
]

/**
 * The live events with each sub-agent's moved to just before the parent's result that links it,
 * as one block, the blocks in the order the result links them (the order they started), nested
 * children likewise: what replay shows of sub-agents that ran at the same time, whose events
 * interleaved live (docs/sessions.md, "Replay"). Each session's own events keep their live order.
 * A no-op for sub-agents that ran one after the other.
 */
function childrenInBlocks(live: readonly Event[], root: string): Event[] {
  const bySession = new Map<string, Event[]>()
  for (const event of live) {
    const list = bySession.get(event.sessionId) ?? []
    list.push(event)
    bySession.set(event.sessionId, list)
  }
  const placed = new Set<string>()
  const stream = (id: string): Event[] => {
    placed.add(id)
    return (bySession.get(id) ?? []).flatMap((event) => {
      if (event.type !== 'tool_result' || event.uiExtra?.type !== 'session') return [event]
      const { sessionId, moreSessionIds = [] } = event.uiExtra
      const linked = [sessionId, ...moreSessionIds].filter((child) => !placed.has(child))
      return [...linked.flatMap(stream), event]
    })
  }
  const events = stream(root)
  expect(placed.size, 'every session is linked').toBe(bySession.size)
  return events
}

type Json = Record<string, unknown>

/**
 * The live events a replay can show, as JSON carries them: the replayed event types only
 * (deltas, task boundaries, `tool_call_start`, `context_usage` are live only), without the
 * retry notices (`error` with `canRetry`) that no record keeps (see `keptRetries`), and without
 * the compactions that found nothing to summarise, which no record keeps (see `nothingToCompact`).
 */
function expectedReplay(
  live: readonly Event[],
  histories: ReadonlyMap<string, readonly HistoryEvent[]>,
): Json[] {
  const kept = keptRetries(histories)
  const events = (replayedPart(live) as Json[]).filter((e) => {
    if (e.type !== 'error' || e.canRetry !== true) return true
    const next = kept.get(e.sessionId as string)
    if (next === undefined || next[0] !== e.errorMessage) return false
    next.shift()
    return true
  })
  const skipped = nothingToCompact(events, histories)
  return events.filter((_, i) => !skipped.has(i))
}

/**
 * The messages of the retry notices each session's history keeps, in order: a retry whose attempt
 * its provider billed has an `error` record (`canRetry` with `usage`); any other is an event only.
 */
function keptRetries(histories: ReadonlyMap<string, readonly HistoryEvent[]>): Map<string, string[]> {
  const kept = new Map<string, string[]>()
  for (const [id, history] of histories) {
    const retries = history.flatMap((r) =>
      !('role' in r) && r.type === 'error' && r.canRetry === true && r.usage ? [r.message] : [],
    )
    kept.set(id, retries)
  }
  return kept
}

/**
 * The indexes of the `compaction_start` / `compaction_end` pairs of compactions that found
 * nothing to summarise: an unsaved compaction (`compacted: false`) that its session's history
 * does not mark, in order, on an `error` (a failed summary, with `errorMessage`) or an `interrupt`.
 */
function nothingToCompact(events: readonly Json[], histories: ReadonlyMap<string, readonly HistoryEvent[]>) {
  const marked = new Map<string, { type: string; reason: string; tokensBefore: number }[]>()
  for (const [id, history] of histories) {
    const markers = history.flatMap((r) =>
      !('role' in r) && (r.type === 'error' || r.type === 'interrupt') && r.compaction
        ? [{ type: r.type, ...r.compaction }]
        : [],
    )
    marked.set(id, markers)
  }
  const skipped = new Set<number>()
  events.forEach((event, i) => {
    if (event.type !== 'compaction_end' || event.compacted === true) return
    const markers = marked.get(event.sessionId as string) ?? []
    const next = markers[0]
    const failed = event.errorMessage !== undefined
    if (
      next !== undefined &&
      next.reason === event.reason &&
      next.tokensBefore === event.tokensBefore &&
      (next.type === 'error') === failed
    ) {
      markers.shift()
      return
    }
    expect(failed, 'a failed summary is always marked').toBe(false)
    const start = events.findLastIndex(
      (e, j) => j < i && e.type === 'compaction_start' && e.sessionId === event.sessionId,
    )
    skipped.add(start).add(i)
  })
  return skipped
}

/**
 * The replay without what it shows by design and a live run does not: the `response_complete`
 * of an aborted or failed message (its text has no other event), the `interrupt` after each
 * aborted tool result but the last of a run of them, and the second `interrupt` of a turn whose
 * response was aborted too (live emits one).
 */
function comparableReplay(
  replay: readonly Event[],
  histories: ReadonlyMap<string, readonly HistoryEvent[]>,
): Json[] {
  const cut = new Set<string>()
  for (const record of [...histories.values()].flat()) {
    if ('role' in record && record.role === 'assistant' && record.responseId !== undefined) {
      if (record.stopReason === 'aborted' || record.stopReason === 'error') cut.add(record.responseId)
    }
  }
  const events = JSON.parse(JSON.stringify(replay)) as Json[]
  return events.filter((event, i) => {
    if (event.type === 'response_complete') return !cut.has(event.responseId as string)
    if (event.type !== 'interrupt') return true
    const next = events[i + 1]
    return !(
      next?.sessionId === event.sessionId &&
      (next?.type === 'tool_result' || next?.type === 'interrupt')
    )
  })
}

describe('replay parity: the replay of a stored session is its live events', () => {
  const harness = useHarness('file')

  test.each(SCENARIOS)(
    '%s',
    async (_, scenario) => {
      const h = harness()
      const { sessionId, live: emitted, concurrent } = await scenario(h)
      expectOrdered(emitted)
      const live = concurrent ? childrenInBlocks(emitted, sessionId) : emitted
      // Regrouping is what sets these scenarios apart: their children did interleave live.
      expect(replayedPart(live)).toHaveLength(replayedPart(emitted).length)
      if (concurrent) expect(replayedPart(live)).not.toEqual(replayedPart(emitted))
      const store = h.reopenStore()
      const replay = await replaySession(store, sessionId)
      expectOrdered(replay)
      // The session's history and its sub-agents' (their events are in both streams too).
      const histories = new Map<string, readonly HistoryEvent[]>([[sessionId, await store.read(sessionId)]])
      for (const id of new Set(live.map((e) => e.sessionId))) histories.set(id, await store.read(id))
      expect(comparableReplay(replay, histories)).toEqual(expectedReplay(live, histories))
    },
    30_000,
  )
})
