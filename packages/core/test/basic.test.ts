import type { Event } from '@kode/protocol'
import { describe, expect, test } from 'vitest'
import { call, chatStream, say, textReply, think } from './helpers/chat-wire.js'
import { collect, NOW, useHarness } from './helpers/harness.js'
import { expectOrdered, expectValidHistory } from './helpers/history-checks.js'
import { summarize, summarizeHistory } from './helpers/summarize.js'
import { readFile } from './helpers/tools.js'

describe.each(['memory', 'file'] as const)('a task (%s store)', (kind) => {
  const harness = useHarness(kind)

  test('text only: one turn, streamed text, the final snapshot, usage and context usage', async () => {
    const h = harness()
    h.server.enqueue(chatStream({ id: 'r1', steps: [think('Just greet.'), say('Hello there!')] }))
    const agent = h.createAgent({ system: 'Be brief.' })
    const { events, outcome } = await collect(agent.run('Hi'))

    expectOrdered(events)
    expect(summarize(events)).toEqual([
      'task_start',
      'user_message: Hi',
      'turn_start',
      'thinking_start',
      'thinking: Just greet.',
      'thinking_end',
      'assistant_text_start',
      'text: Hello there!',
      'assistant_text_end',
      'response_complete: Hello there! | thinking: Just greet.',
      'usage 100/20',
      'context_usage 120/128000',
      'turn_end',
      'task_metadata turns=1 subAgents=0',
      'task_finish completed: Hello there!',
    ])
    expect(events.every((e) => e.sessionId === agent.sessionId && e.timestamp === NOW)).toBe(true)
    const streamed = events.filter(
      (e) => e.type.startsWith('thinking') || e.type.startsWith('assistant_text'),
    )
    expect(streamed.every((e) => (e as { responseId?: string }).responseId === 'r1')).toBe(true)

    const history = await agent.history()
    expect(history).toEqual([
      { role: 'system', id: 'id2', createdAt: NOW, parts: [{ type: 'text', text: 'Be brief.' }] },
      { role: 'user', id: 'id3', createdAt: NOW, parts: [{ type: 'text', text: 'Hi' }] },
      {
        role: 'assistant',
        id: 'm1',
        createdAt: NOW,
        parts: [
          { type: 'thinking_text', text: 'Just greet.' },
          { type: 'text', text: 'Hello there!' },
        ],
        usage: { inputTokens: 100, outputTokens: 20, totalTokens: 120 },
        stopReason: 'stop',
        rawStopReason: 'stop',
        responseId: 'r1',
        model: 'gpt-4o',
        provider: 'openai-chat',
        api: 'openai-chat',
        costUsd: (100 * 2.5 + 20 * 10) / 1e6,
        durationMs: 0,
      },
      {
        type: 'task_metadata',
        id: 'id4',
        createdAt: NOW,
        metadata: {
          main: {
            sessionId: 'id1',
            model: 'gpt-4o',
            provider: 'openai-chat',
            usage: { inputTokens: 100, outputTokens: 20, totalTokens: 120 },
            costUsd: (100 * 2.5 + 20 * 10) / 1e6,
            durationMs: 0,
            turnCount: 1,
          },
          subAgents: [],
        },
        reason: 'completed',
      },
    ])
    expect(outcome).toEqual({
      sessionId: 'id1',
      reason: 'completed',
      text: 'Hello there!',
      metadata: (history[3] as { metadata: unknown }).metadata,
    })
  })

  test('an image the model produces is an assistant_image_delta and an image part', async () => {
    const h = harness()
    const url = 'data:image/png;base64,iVBORw0KGgo='
    h.server.enqueue(chatStream({ id: 'r1', steps: [say('Here it is:'), { image: url }] }))
    const agent = h.createAgent()
    const { events } = await collect(agent.run('Draw a dot'))
    expectOrdered(events)
    expect(summarize(events)).toEqual([
      'task_start',
      'user_message: Draw a dot',
      'turn_start',
      'assistant_text_start',
      'text: Here it is:',
      `assistant_image_delta ${url}`,
      'assistant_text_end',
      'response_complete: Here it is:',
      'usage 100/20',
      'context_usage 120/128000',
      'turn_end',
      'task_metadata turns=1 subAgents=0',
      'task_finish completed: Here it is:',
    ])
    const history = await agent.history()
    expect(summarizeHistory(history)).toEqual([
      'user: Draw a dot',
      'assistant stop: text "Here it is:" | image_url',
      'task_metadata turns=1 subAgents=0',
    ])
    expect(history[1]).toMatchObject({
      parts: [
        { type: 'text', text: 'Here it is:' },
        { type: 'image_url', url },
      ],
    })
  })

  test('the request carries the persisted system prompt and the tools', async () => {
    const h = harness()
    h.server.enqueue(textReply('r1', 'Hi'))
    await collect(h.createAgent({ system: 'Be brief.', tools: [readFile] }).run('Hello'))
    const body = h.server.requests[0]!.body as {
      messages: unknown[]
      tools: { function: { name: string } }[]
    }
    expect(body.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hello' },
    ])
    expect(body.tools.map((t) => t.function.name)).toEqual(['read_file'])
  })

  test('tool then text: the result goes back to the model and the loop ends on a plain answer', async () => {
    const h = harness()
    h.server.enqueue(
      chatStream({ id: 'r1', steps: [say('Let me look.'), call('c1', 'read_file', { path: 'a.txt' })] }),
      textReply('r2', 'It says hello.'),
    )
    const agent = h.createAgent({ tools: [readFile] })
    const { events, outcome } = await collect(agent.run('What is in a.txt?'))

    expectOrdered(events)
    expect(summarize(events)).toEqual([
      'task_start',
      'user_message: What is in a.txt?',
      'turn_start',
      'assistant_text_start',
      'text: Let me look.',
      'assistant_text_end',
      'tool_call_start c1 read_file',
      'response_complete: Let me look.',
      'usage 100/20',
      'context_usage 120/128000',
      'tool_call c1 read_file {"path":"a.txt"}',
      'tool_result c1 success (last): contents of a.txt',
      'turn_end',
      'turn_start',
      'assistant_text_start',
      'text: It says hello.',
      'assistant_text_end',
      'response_complete: It says hello.',
      'usage 100/20',
      'context_usage 120/128000',
      'turn_end',
      'task_metadata turns=2 subAgents=0',
      'task_finish completed: It says hello.',
    ])
    const history = await agent.history()
    expectValidHistory(history)
    expect(summarizeHistory(history)).toEqual([
      'user: What is in a.txt?',
      'assistant tool_use: text "Let me look." | call c1 read_file {"path":"a.txt"}',
      'tool c1 success: contents of a.txt',
      'assistant stop: text "It says hello."',
      'task_metadata turns=2 subAgents=0',
    ])
    expect(history[2]).toEqual({
      role: 'tool',
      id: 'id3',
      createdAt: NOW,
      toolCallId: 'c1',
      toolName: 'read_file',
      status: 'success',
      outputText: 'contents of a.txt',
      parts: [],
    })
    const second = h.server.requests[1]!.body as { messages: unknown[] }
    expect(second.messages.at(-1)).toEqual({ role: 'tool', tool_call_id: 'c1', content: 'contents of a.txt' })
    expect(outcome.metadata.main.usage).toEqual({ inputTokens: 200, outputTokens: 40, totalTokens: 240 })
  })

  test('a three-turn loop continues while responses call tools', async () => {
    const h = harness()
    h.server.enqueue(
      chatStream({ id: 'r1', steps: [call('c1', 'read_file', { path: '1' })] }),
      chatStream({ id: 'r2', steps: [call('c2', 'read_file', { path: '2' })] }),
      textReply('r3', 'Done.'),
    )
    const agent = h.createAgent({ tools: [readFile] })
    const { events, outcome } = await collect(agent.run('Read both'))

    expectOrdered(events)
    expect(summarize(events)).toEqual([
      'task_start',
      'user_message: Read both',
      'turn_start',
      'tool_call_start c1 read_file',
      'response_complete: ',
      'usage 100/20',
      'context_usage 120/128000',
      'tool_call c1 read_file {"path":"1"}',
      'tool_result c1 success (last): contents of 1',
      'turn_end',
      'turn_start',
      'tool_call_start c2 read_file',
      'response_complete: ',
      'usage 100/20',
      'context_usage 120/128000',
      'tool_call c2 read_file {"path":"2"}',
      'tool_result c2 success (last): contents of 2',
      'turn_end',
      'turn_start',
      'assistant_text_start',
      'text: Done.',
      'assistant_text_end',
      'response_complete: Done.',
      'usage 100/20',
      'context_usage 120/128000',
      'turn_end',
      'task_metadata turns=3 subAgents=0',
      'task_finish completed: Done.',
    ])
    expect(summarizeHistory(await agent.history())).toEqual([
      'user: Read both',
      'assistant tool_use: call c1 read_file {"path":"1"}',
      'tool c1 success: contents of 1',
      'assistant tool_use: call c2 read_file {"path":"2"}',
      'tool c2 success: contents of 2',
      'assistant stop: text "Done."',
      'task_metadata turns=3 subAgents=0',
    ])
    expect(outcome.metadata.main.turnCount).toBe(3)
    expect(h.server.requests).toHaveLength(3)
  })

  test('the emitter gets the same events as the iterator, on `event` and on each type channel', async () => {
    const h = harness()
    h.server.enqueue(
      chatStream({ id: 'r1', steps: [call('c1', 'read_file', { path: 'x' })] }),
      textReply('r2', 'ok'),
    )
    const agent = h.createAgent({ tools: [readFile] })
    const emitted: Event[] = []
    const results: Event[] = []
    agent.events.on('event', (event) => emitted.push(event))
    agent.events.on('tool_result', (event) => results.push(event))
    const { events } = await collect(agent.run('go'))
    expect(emitted).toEqual(events)
    expect(results).toEqual(events.filter((e) => e.type === 'tool_result'))
  })

  test('listeners added and removed during a task get the events from then on, on both channels', async () => {
    const h = harness()
    h.server.enqueue(
      chatStream({ id: 'r1', steps: [call('c1', 'read_file', { path: 'x' })] }),
      textReply('r2', 'ok'),
    )
    const agent = h.createAgent({ tools: [readFile] })
    const typed: string[] = []
    const all: string[] = []
    const onAny = (event: Event) => all.push(event.type)
    const onResult = (event: Event) =>
      typed.push(`${event.type}:${(event as { toolCallId: string }).toolCallId}`)
    // A listener on `event` that subscribes to a type gets that very event on the type's channel too.
    agent.events.on('event', (event) => {
      if (event.type === 'tool_result') agent.events.on('tool_result', onResult)
      if (event.type === 'turn_start' && all.length === 0) agent.events.on('event', onAny)
      if (event.type === 'response_complete') agent.events.off('event', onAny)
    })
    const { events } = await collect(agent.run('go'))
    expect(typed).toEqual(['tool_result:c1'])
    // Added while `turn_start` was emitted, removed while `response_complete` was: an emit calls
    // the listeners its channel had when it began.
    const firstTurn = events.slice(
      events.findIndex((e) => e.type === 'turn_start') + 1,
      events.findIndex((e) => e.type === 'response_complete') + 1,
    )
    expect(all).toEqual(firstTurn.map((e) => e.type))
  })

  test('a second task on the same agent continues the session', async () => {
    const h = harness()
    h.server.enqueue(textReply('r1', 'One.'), textReply('r2', 'Two.'))
    const agent = h.createAgent({ system: 'S' })
    await collect(agent.run('first'))
    const { events } = await collect(agent.run('second'))
    expectOrdered(events)
    expect(summarize(events)).toEqual([
      'task_start',
      'user_message: second',
      'turn_start',
      'assistant_text_start',
      'text: Two.',
      'assistant_text_end',
      'response_complete: Two.',
      'usage 100/20',
      'context_usage 120/128000',
      'turn_end',
      'task_metadata turns=1 subAgents=0',
      'task_finish completed: Two.',
    ])
    expect(summarizeHistory(await agent.history())).toEqual([
      'system: S',
      'user: first',
      'assistant stop: text "One."',
      'task_metadata turns=1 subAgents=0',
      'user: second',
      'assistant stop: text "Two."',
      'task_metadata turns=1 subAgents=0',
    ])
    const second = h.server.requests[1]!.body as { messages: { role: string }[] }
    expect(second.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user'])
  })
})
