import type { HistoryEvent } from '@kode/protocol'
import { describe, expect, test } from 'vitest'
import { textReply } from './helpers/chat-wire.js'
import { collect, useHarness } from './helpers/harness.js'
import { expectOrdered, expectValidHistory } from './helpers/history-checks.js'
import { replayedPart, replayOf, replayThenLive } from './helpers/replayed.js'
import { summarize } from './helpers/summarize.js'
import { readFile } from './helpers/tools.js'

// A process that died after a turn's last record, before its task's `task_metadata` (while it
// asked the model for the next response, say), left that turn open: the replay of its history
// ends it only because the history ends there. The next task closes it, as the replay of the
// history it leaves does, at the next message or response.

const input: HistoryEvent = {
  role: 'user',
  id: 'u1',
  createdAt: 1,
  parts: [{ type: 'text', text: 'Read a.txt' }],
}

/** A response whose one call has its result. */
const ANSWERED: HistoryEvent[] = [
  input,
  {
    role: 'assistant',
    id: 'a1',
    createdAt: 2,
    parts: [{ type: 'tool_call', id: 'c1', name: 'read_file', argumentsJson: '{"path":"a.txt"}' }],
    stopReason: 'tool_use',
    responseId: 'r0',
  },
  {
    role: 'tool',
    id: 't1',
    createdAt: 3,
    toolCallId: 'c1',
    toolName: 'read_file',
    status: 'success',
    outputText: 'contents of a.txt',
    parts: [],
  },
]

/** A final response (no calls), the task's end never written. */
const FINAL: HistoryEvent[] = [
  input,
  {
    role: 'assistant',
    id: 'a1',
    createdAt: 2,
    parts: [{ type: 'text', text: 'It says hello.' }],
    stopReason: 'stop',
    responseId: 'r0',
  },
]

/** Events without their timestamps: the dead records' clock is not the test's. */
const untimed = (events: unknown[]) => events.map((e) => ({ ...(e as object), timestamp: 0 }))

describe('a task after a process that died with its last turn done', () => {
  const harness = useHarness()

  test.each([
    ['its calls answered', 'run', ANSWERED],
    ['its calls answered', 'continue', ANSWERED],
    ['a final response', 'run', FINAL],
    ['a final response', 'continue', FINAL],
  ] as const)('after %s, %s closes that turn first, as the replay does', async (_, how, dead) => {
    const h = harness()
    await h.store.create({ id: 'dead' })
    await h.store.append('dead', dead)
    h.server.enqueue(textReply('r1', 'Done.'))
    const agent = h.createAgent({ sessionId: 'dead', tools: [readFile] })
    const { events, outcome } = await collect(how === 'run' ? agent.run('Thanks') : agent.continue())
    expect(outcome.reason).toBe('completed')
    expect(summarize(events).slice(0, 3)).toEqual([
      'task_start',
      'turn_end',
      how === 'run' ? 'user_message: Thanks' : 'turn_start',
    ])
    // What a watcher saw of the dead task (the replay of what it left, its turn still open), then
    // this task's events: one valid sequence, the replay of the history they leave.
    const watched = replayThenLive(dead, 'dead', events)
    expectOrdered(watched)
    const history = await agent.history()
    expectValidHistory(history)
    expect(untimed(replayedPart(watched))).toEqual(untimed(replayOf(history, 'dead')))
  })
})
