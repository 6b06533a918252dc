import { type Agent, defineSubAgent, defineTool } from '@kode/core'
import type { Event, HistoryEvent } from '@kode/protocol'
import type { RecordedRequest, ScriptedResponse } from '@kode/providers/testing'
import { Type } from '@sinclair/typebox'
import { chatStream, say, textReply } from '../helpers/chat-wire.js'
import { collect, type Harness } from '../helpers/harness.js'
import { readChunk, TINY } from '../helpers/small-window.js'
import { readFile } from '../helpers/tools.js'

// What the replay-parity scenarios share: how a scenario records its agents' events, and the
// tools and scripted responses several of them use.

export type Messages = { role: string; content?: unknown }[]
export const messagesOf = (request: RecordedRequest) => (request.body as { messages: Messages }).messages

/** What a scenario leaves: the session, every event its agents emitted (all tasks, in order). */
export interface Ran {
  sessionId: string
  live: Event[]
  /**
   * Sub-agents ran at the same time: replay shows each one's events as a block (see
   * `childrenInBlocks`), which the scenario checks they were not live.
   */
  concurrent?: true
}

/** Records every event `agent` emits from now on into `live`. */
export function record(agent: Agent, live: Event[]): Agent {
  agent.events.on('event', (event) => live.push(event))
  return agent
}

/** An agent on the small-window model that reads the log chunk by chunk, its events recorded in `live`. */
export function chunkReader(
  h: Harness,
  live: Event[],
  options: Parameters<Harness['createAgent']>[0] = {},
): Agent {
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
export async function drain(run: ReturnType<Agent['run']>) {
  return (await collect(run)).outcome
}

export const fails = defineTool({
  name: 'fails',
  description: 'Always throws',
  parameters: Type.Object({}),
  execute: () => {
    throw new Error('disk on fire')
  },
})

export const needsOk = defineTool({
  name: 'write_file',
  description: 'Writes a file',
  parameters: Type.Object({ path: Type.String() }),
  needsApproval: true,
  execute: ({ path }) => `wrote ${path}`,
})

export const researcher = defineSubAgent({
  name: 'researcher',
  description: 'Researches',
  system: 'You research.',
  tools: [readFile],
})

/** How many retries a history keeps a record of (those whose attempt its provider billed). */
export const billedRetries = (history: readonly HistoryEvent[]) =>
  history.filter((r) => !('role' in r) && r.type === 'error' && r.canRetry === true && r.usage).length

/** A stream cut (connection reset) after roughly the first third of its bytes. */
export function cutStream(id: string, text: string): ScriptedResponse {
  const full = chatStream({ id, steps: [say(text)] })
  const bytes = (full.body as string[]).join('').length
  return { ...full, resetAfterBytes: Math.floor(bytes / 3) }
}

/** Answers a text reply once the last message is a tool result, else `first`. */
export function toolsThenText(first: ScriptedResponse, text = 'All done.') {
  return (request: RecordedRequest): ScriptedResponse =>
    messagesOf(request).at(-1)?.role === 'tool' ? textReply('r-end', text) : first
}

export type Scenario = readonly [string, (h: Harness) => Promise<Ran>]
