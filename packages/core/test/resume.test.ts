import { spawn } from 'node:child_process'
import { rmSync } from 'node:fs'
import { resolve } from 'node:path'
import { createInterface } from 'node:readline'
import type { Event } from '@kode/protocol'
import { MISSING_RESULT_TEXT } from '@kode/protocol/helpers'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { bundleForNode } from '../../../test/children/bundle-for-node.js'
import { call, chatStream, textReply } from './helpers/chat-wire.js'
import { collect, type Harness, useHarness } from './helpers/harness.js'
import { expectOrdered, expectValidHistory } from './helpers/history-checks.js'
import { replayedPart, replayOf, replayThenLive } from './helpers/replayed.js'
import { summarize, summarizeHistory } from './helpers/summarize.js'

const STOPPED =
  'The task stopped before this tool call finished (its process ended); it may or may not have run.'

let child: string
beforeAll(async () => {
  child = await bundleForNode(resolve(import.meta.dirname, 'processes/agent-child.ts'))
}, 60_000)
afterAll(() => rmSync(resolve(child, '..'), { recursive: true, force: true }))

describe('resume after a crash (file store)', () => {
  const harness = useHarness('file')

  test('while another process runs a task on the session, an agent here is refused and writes nothing', async () => {
    const h = harness()
    h.server.enqueue(chatStream({ id: 'r1', steps: [call('c1', 'job', {})] }))
    const proc = spawn(process.execPath, [child, h.dir!, h.server.url, 's1'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    const exited = new Promise((done) => proc.on('exit', done))
    for await (const line of createInterface({ input: proc.stdout! })) if (line === 'tool-started') break

    const agent = h.createAgent({ sessionId: 's1' })
    const error = await agent.run('Me too').done.catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'session_locked', owner: 'other-process', holder: { pid: proc.pid } })
    expect((error as Error).message).toContain('wait for it to finish or stop it')
    expect(h.server.requests).toHaveLength(1)

    proc.kill('SIGKILL')
    await exited
    // Its writer gone, the session is taken over; the dangling call gets its result first.
    h.server.enqueue(textReply('r2', 'Done.'))
    expect((await collect(agent.run('Again'))).outcome).toMatchObject({ reason: 'completed' })
    expect(summarizeHistory(await agent.history())).toEqual([
      'system: You run jobs.',
      'user: Start the job',
      'assistant tool_use: call c1 job {}',
      `tool c1 error: ${STOPPED}`,
      'user: Again',
      'assistant stop: text "Done."',
      'task_metadata turns=1 subAgents=0',
    ])
  })

  test('a process killed mid-tool loses only the result in flight; a new message settles the call first, and together the events are the replay', async () => {
    const h = harness()
    const dead = await killMidTool(h)
    expect(summarize(dead).slice(-2)).toEqual(['context_usage 120/128000', 'tool_call c1 job {}'])

    // What the crashed process had made durable: everything up to the call that was running.
    const store = h.reopenStore()
    const before = await store.read('s1')
    expect(summarizeHistory(before)).toEqual([
      'system: You run jobs.',
      'user: Start the job',
      'assistant tool_use: call c1 job {}',
    ])

    h.server.enqueue(textReply('r2', 'The job was interrupted; shall I retry?'))
    const agent = h.createAgent({ store, sessionId: 's1' })
    const { events, outcome } = await collect(agent.run('What happened?'))
    const answer = 'The job was interrupted; shall I retry?'
    // The dangling call is answered in the turn the dead process opened (never run again: the
    // user moved on), that turn ends, then the new message's turn runs as usual.
    expect(summarize(events)).toEqual([
      'task_start',
      `tool_result c1 error (last): ${STOPPED}`,
      'turn_end',
      'user_message: What happened?',
      'turn_start',
      'assistant_text_start',
      `text: ${answer}`,
      'assistant_text_end',
      `response_complete: ${answer}`,
      'usage 100/20',
      'context_usage 120/128000',
      'turn_end',
      'task_metadata turns=1 subAgents=0',
      `task_finish completed: ${answer}`,
    ])
    expect(events.every((e) => e.sessionId === 's1')).toBe(true)
    expect(outcome).toMatchObject({ reason: 'completed', sessionId: 's1' })
    expect(h.server.requests).toHaveLength(2)

    // The model sees the recorded result, not a stand-in for a missing one.
    const request = h.server.requests[1]!.body as { messages: unknown[] }
    expect(request.messages).toEqual([
      { role: 'system', content: 'You run jobs.' },
      { role: 'user', content: 'Start the job' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'job', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: STOPPED },
      { role: 'user', content: 'What happened?' },
    ])
    expect(JSON.stringify(request.messages)).not.toContain(MISSING_RESULT_TEXT)
    const history = await agent.history()
    expectValidHistory(history)
    expect(summarizeHistory(history)).toEqual([
      'system: You run jobs.',
      'user: Start the job',
      'assistant tool_use: call c1 job {}',
      `tool c1 error: ${STOPPED}`,
      'user: What happened?',
      'assistant stop: text "The job was interrupted; shall I retry?"',
      'task_metadata turns=1 subAgents=0',
    ])
    // The dead process's events, then this task's, are the replay of the history they leave (the
    // dead task's `task_start` never got its `task_finish`, so only the replayed part compares).
    expect(replayedPart([...dead, ...events])).toEqual(replayOf(history, 's1'))
    // A watcher showing the replay of the history the task started from, then its events: every
    // call has its result when the task finishes.
    expectOrdered(replayThenLive(before, 's1', events))
    expect(replayedPart(replayThenLive(before, 's1', events))).toEqual(replayOf(history, 's1'))
  })

  test("a task continued after its process died goes on from the dead process's events: together they are the replay", async () => {
    const h = harness()
    const dead = await killMidTool(h)
    expect(summarize(dead).slice(-2)).toEqual(['context_usage 120/128000', 'tool_call c1 job {}'])

    h.server.enqueue(textReply('r2', 'The job stopped.'))
    const store = h.reopenStore()
    const before = await store.read('s1')
    const agent = h.createAgent({ store, sessionId: 's1' })
    const { events, outcome } = await collect(agent.continue())
    expect(outcome.reason).toBe('completed')
    // The call is answered, not announced again, and its turn (opened by the dead process) ends.
    expect(summarize(events).slice(0, 3)).toEqual([
      'task_start',
      `tool_result c1 error (last): ${STOPPED}`,
      'turn_end',
    ])
    const history = await agent.history()
    expectValidHistory(history)
    expect(replayedPart([...dead, ...events])).toEqual(replayOf(history, 's1'))
    // A watcher showing the replay of the history the task started from, then its events.
    expectOrdered(replayThenLive(before, 's1', events))
    expect(replayedPart(replayThenLive(before, 's1', events))).toEqual(replayOf(history, 's1'))
  })
})

describe('resume', () => {
  const harness = useHarness()

  test('an agent opened on an existing session continues it, keeping its recorded system prompt', async () => {
    const h = harness()
    h.server.enqueue(textReply('r1', 'Noted.'), textReply('r2', 'You said hello.'))
    const first = h.createAgent({ system: 'Remember things.' })
    await collect(first.run('hello'))

    const resumed = h.createAgent({ sessionId: first.sessionId })
    const { events } = await collect(resumed.run('What did I say?'))
    expectOrdered(events)
    expect(summarize(events)).toEqual([
      'task_start',
      'user_message: What did I say?',
      'turn_start',
      'assistant_text_start',
      'text: You said hello.',
      'assistant_text_end',
      'response_complete: You said hello.',
      'usage 100/20',
      'context_usage 120/128000',
      'turn_end',
      'task_metadata turns=1 subAgents=0',
      'task_finish completed: You said hello.',
    ])
    const request = h.server.requests[1]!.body as { messages: { role: string; content: unknown }[] }
    expect(request.messages.map((m) => `${m.role}: ${m.content}`)).toEqual([
      'system: Remember things.',
      'user: hello',
      'assistant: Noted.',
      'user: What did I say?',
    ])
    const history = await resumed.history()
    expectValidHistory(history)
    expect(summarizeHistory(history)).toEqual([
      'system: Remember things.',
      'user: hello',
      'assistant stop: text "Noted."',
      'task_metadata turns=1 subAgents=0',
      'user: What did I say?',
      'assistant stop: text "You said hello."',
      'task_metadata turns=1 subAgents=0',
    ])
  })

  test('a changed system prompt is persisted again and replaces the old one', async () => {
    const h = harness()
    h.server.enqueue(textReply('r1', 'A'), textReply('r2', 'B'))
    const first = h.createAgent({ system: 'Old prompt.' })
    await collect(first.run('one'))
    await collect(h.createAgent({ sessionId: first.sessionId, system: 'New prompt.' }).run('two'))
    const request = h.server.requests[1]!.body as { messages: { role: string; content: unknown }[] }
    expect(request.messages[0]).toEqual({ role: 'system', content: 'New prompt.' })
    expect(summarizeHistory(await first.history())).toEqual([
      'system: Old prompt.',
      'user: one',
      'assistant stop: text "A"',
      'task_metadata turns=1 subAgents=0',
      'system: New prompt.',
      'user: two',
      'assistant stop: text "B"',
      'task_metadata turns=1 subAgents=0',
    ])
  })

  test('a new session id the store does not know yet is created', async () => {
    const h = harness()
    h.server.enqueue(textReply('r1', 'Hi'))
    const agent = h.createAgent({ sessionId: 'my-session' })
    expect(await agent.history()).toEqual([])
    await collect(agent.run('hello'))
    expect(await h.store.info('my-session')).toMatchObject({
      id: 'my-session',
      model: 'gpt-4o',
      provider: 'openai-chat',
    })
  })
})

/**
 * Runs a task in a child process over `h`'s store and server, whose model calls the tool `job`
 * (call `c1`), and kills it with SIGKILL once the tool has started and its `tool_call` is out;
 * returns the events the child had emitted.
 */
async function killMidTool(h: Harness): Promise<Event[]> {
  h.server.enqueue(chatStream({ id: 'r1', steps: [call('c1', 'job', {})] }))
  const proc = spawn(process.execPath, [child, h.dir!, h.server.url, 's1', 'json'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const exited = new Promise((done) => proc.on('exit', done))
  const dead: Event[] = []
  let started = false
  // The tool starts before the loop prints its `tool_call`: wait for both.
  for await (const line of createInterface({ input: proc.stdout! })) {
    if (line.startsWith('event ')) dead.push(JSON.parse(line.slice('event '.length)) as Event)
    started ||= line === 'tool-started'
    if (started && dead.at(-1)?.type === 'tool_call') break
  }
  proc.kill('SIGKILL')
  await exited
  return dead
}
