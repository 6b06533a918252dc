import { AgentError } from '@kode/core'
import { Type } from '@sinclair/typebox'
import { describe, expect, test } from 'vitest'
import { chatStream, say, stalledChatStream, textReply } from '../helpers/chat-wire.js'
import { collect, NOW, useHarness } from '../helpers/harness.js'
import { expectOrdered, expectValidHistory } from '../helpers/history-checks.js'
import { summarize, summarizeHistory } from '../helpers/summarize.js'

const Weather = Type.Object({ city: Type.String(), celsius: Type.Number() }, { additionalProperties: false })
const VALID = '{"city":"Oslo","celsius":4}'
const CORRECTION = [
  'Your final answer does not match the required JSON schema:',
  '- /celsius: Expected required property',
  '- /celsius: Expected number',
  'Answer again with only a JSON object that is valid against the schema.',
].join('\n')

/** The events of one text-only turn of the scripted chat model (100 in, 20 out). */
function textTurn(text: string): string[] {
  return [
    'turn_start',
    'assistant_text_start',
    `text: ${text}`,
    'assistant_text_end',
    `response_complete: ${text}`,
    'usage 100/20',
    'context_usage 120/128000',
    'turn_end',
  ]
}

describe('structured output: validation', () => {
  const harness = useHarness()

  test('an answer that does not validate gets one corrective turn with the errors, then completes', async () => {
    const h = harness()
    h.server.enqueue(textReply('r1', '{"city":"Oslo"}'))
    h.server.enqueue(textReply('r2', VALID))
    const agent = h.createAgent()
    const { events, outcome } = await collect(agent.run('Weather in Oslo?', { output: Weather }))

    expectOrdered(events)
    expect(summarize(events)).toEqual([
      'task_start',
      'user_message: Weather in Oslo?',
      ...textTurn('{"city":"Oslo"}'),
      `user_message: ${CORRECTION}`,
      ...textTurn(VALID),
      'task_metadata turns=2 subAgents=0',
      `task_finish completed: ${VALID}`,
    ])
    expect(events.at(-1)).toMatchObject({ type: 'task_finish', hasStructuredOutput: true })
    const history = await agent.history()
    expectValidHistory(history)
    expect(summarizeHistory(history)).toEqual([
      'user: Weather in Oslo?',
      'assistant stop: text "{"city":"Oslo"}"',
      `user: ${CORRECTION}`,
      `assistant stop: text "${VALID}"`,
      'task_metadata turns=2 subAgents=0',
    ])
    // The corrective turn is the model's next input, after its own answer.
    const second = h.server.requests[1]!.body as { messages: unknown[]; response_format: unknown }
    expect(second.messages.slice(-2)).toEqual([
      { role: 'assistant', content: '{"city":"Oslo"}' },
      { role: 'user', content: CORRECTION },
    ])
    expect(second.response_format).toEqual(
      (h.server.requests[0]!.body as { response_format: unknown }).response_format,
    )
    expect(outcome).toMatchObject({ reason: 'completed', text: VALID, output: { city: 'Oslo', celsius: 4 } })
  })

  test('an answer still invalid after the corrective turn ends the task as structured_output_invalid, without output', async () => {
    const h = harness()
    h.server.enqueue(textReply('r1', 'It is 4 degrees in Oslo.'))
    h.server.enqueue(textReply('r2', '{"city":"Oslo","celsius":"four"}'))
    const agent = h.createAgent()
    const { events, outcome } = await collect(agent.run('Weather in Oslo?', { output: Weather }))

    const notJson = [
      'Your final answer does not match the required JSON schema:',
      '- the answer is not JSON',
      'Answer again with only a JSON object that is valid against the schema.',
    ].join('\n')
    const reason =
      'The final answer is not valid against the output schema after a corrective turn: /celsius: Expected number'
    expectOrdered(events)
    expect(summarize(events)).toEqual([
      'task_start',
      'user_message: Weather in Oslo?',
      ...textTurn('It is 4 degrees in Oslo.'),
      `user_message: ${notJson}`,
      ...textTurn('{"city":"Oslo","celsius":"four"}'),
      `error: ${reason}`,
      'task_metadata turns=2 subAgents=0',
      'task_finish structured_output_invalid: {"city":"Oslo","celsius":"four"}',
    ])
    expect(events.at(-1)).toMatchObject({ type: 'task_finish', hasStructuredOutput: false })
    const history = await agent.history()
    expectValidHistory(history)
    expect(summarizeHistory(history)).toEqual([
      'user: Weather in Oslo?',
      'assistant stop: text "It is 4 degrees in Oslo."',
      `user: ${notJson}`,
      'assistant stop: text "{"city":"Oslo","celsius":"four"}"',
      `error: ${reason}`,
      'task_metadata turns=2 subAgents=0',
    ])
    expect(history[4]).toEqual({
      type: 'error',
      id: 'id4',
      createdAt: NOW,
      message: reason,
      canRetry: false,
      code: 'structured_output_invalid',
      // Emitted after the last turn's turn_end: replay shows it between turns too.
      turn: 'none',
    })
    expect(outcome).toEqual({
      sessionId: agent.sessionId,
      reason: 'structured_output_invalid',
      text: '{"city":"Oslo","celsius":"four"}',
      errorMessage: reason,
      metadata: (history[5] as { metadata: unknown }).metadata,
    })
    expect('output' in outcome).toBe(false)
    // The task's end records why it ended: a reader of the history can tell it from a failure.
    expect(history[5]).toMatchObject({ type: 'task_metadata', reason: 'structured_output_invalid' })
    expect(h.server.requests).toHaveLength(2)
  })

  test('an invalid answer in the last turn maxTurns allows ends as max_turns, saying why the answer failed', async () => {
    const h = harness()
    h.server.enqueue(textReply('r1', '{"city":"Oslo"}'))
    const agent = h.createAgent({ maxTurns: 1 })
    const { events, outcome } = await collect(agent.run('Weather in Oslo?', { output: Weather }))

    const reason =
      'The task stopped after 1 turns (maxTurns) before the model finished: its answer is not valid ' +
      'against the output schema, and no turn was left to correct it: /celsius: Expected required ' +
      'property; /celsius: Expected number'
    expectOrdered(events)
    // No corrective message: no turn is left to answer it, and the history keeps none unanswered.
    expect(summarize(events)).toEqual([
      'task_start',
      'user_message: Weather in Oslo?',
      ...textTurn('{"city":"Oslo"}'),
      `error: ${reason}`,
      'task_metadata turns=1 subAgents=0',
      'task_finish max_turns: {"city":"Oslo"}',
    ])
    expect(events.at(-1)).toMatchObject({ type: 'task_finish', hasStructuredOutput: false })
    const history = await agent.history()
    expectValidHistory(history)
    expect(summarizeHistory(history)).toEqual([
      'user: Weather in Oslo?',
      'assistant stop: text "{"city":"Oslo"}"',
      `error: ${reason}`,
      'task_metadata turns=1 subAgents=0',
    ])
    expect(history[2]).toMatchObject({ type: 'error', message: reason, code: 'structured_output_invalid' })
    expect(outcome).toMatchObject({ reason: 'max_turns', errorMessage: reason })
    expect('output' in outcome).toBe(false)
    expect(h.server.requests).toHaveLength(1)
  })

  test('an answer JSON reads lossily or ambiguously gets the corrective turn, never becomes the output', async () => {
    const h = harness()
    const Order = Type.Object({ id: Type.Number(), note: Type.String() })
    // An id beyond 2^53 would change without a word; a repeated key, or a __proto__ key a host's
    // Object.assign would turn into a prototype, reads differently to different readers.
    h.server.enqueue(textReply('r1', '{"id": 12345678901234567891, "note": "a"}'))
    h.server.enqueue(textReply('r2', '{"id": 1, "note": "a", "note": "b", "__proto__": {"admin": true}}'))
    const agent = h.createAgent()
    const { outcome } = await collect(agent.run('Order?', { output: Order }))
    const users = summarizeHistory(await agent.history()).filter((line) => line.startsWith('user: Your'))
    expect(users).toEqual([
      [
        'user: Your final answer does not match the required JSON schema:',
        '- the integer 12345678901234567891 cannot be read exactly (beyond 2^53); send it as a string (at /id)',
        'Answer again with only a JSON object that is valid against the schema.',
      ].join('\n'),
    ])
    expect(outcome).toMatchObject({
      reason: 'structured_output_invalid',
      errorMessage:
        'The final answer is not valid against the output schema after a corrective turn: the key "note" appears twice in one object (at /)',
    })
    expect('output' in outcome).toBe(false)
  })

  test('a task continued after its process died past the corrective message gets no second one', async () => {
    const h = harness()
    // The dead process sent the correction; the model answers it, still not JSON.
    const correction = [
      'Your final answer does not match the required JSON schema:',
      '- the answer is not JSON',
      'Answer again with only a JSON object that is valid against the schema.',
    ].join('\n')
    await h.store.create({ id: 'dead' })
    await h.store.append('dead', [
      { role: 'user', id: 'u1', createdAt: NOW, parts: [{ type: 'text', text: 'Weather?' }] },
      {
        role: 'assistant',
        id: 'a1',
        createdAt: NOW,
        stopReason: 'stop',
        parts: [{ type: 'text', text: 'Mild.' }],
      },
      { role: 'user', id: 'u2', createdAt: NOW, parts: [{ type: 'text', text: correction }] },
    ])
    h.server.enqueue(textReply('r2', 'Still mild.'))
    const agent = h.createAgent({ sessionId: 'dead' })
    const { outcome } = await collect(agent.continue({ output: Weather }))
    expect(outcome).toMatchObject({
      reason: 'structured_output_invalid',
      errorMessage:
        'The final answer is not valid against the output schema after a corrective turn: the answer is not JSON',
    })
    expect(h.server.requests).toHaveLength(1)
    // A new task gets its own corrective turn.
    h.server.enqueue(textReply('r3', 'Cold.'), textReply('r4', VALID))
    const next = await collect(agent.run('And tomorrow?', { output: Weather }))
    expect(next.outcome).toMatchObject({ reason: 'completed', output: { city: 'Oslo', celsius: 4 } })
  })

  test('an answer in a fenced json block after a preamble is read', async () => {
    const h = harness()
    h.server.enqueue(textReply('r1', `Here it is:\n\`\`\`json\n${VALID}\n\`\`\``))
    const { outcome } = await collect(h.createAgent().run('Weather?', { output: Weather }))
    expect(outcome).toMatchObject({ reason: 'completed', output: { city: 'Oslo', celsius: 4 } })
  })

  test('an answer that opens a json fence and then only repeats newlines (a model stuck in a loop) is read at once: not JSON, corrected', async () => {
    const h = harness()
    // Scanned with backtracking, such a text took time cubic in its length: 3,000 newlines, many seconds.
    const stuck = `Here it is:\n\`\`\`json\n${'\n'.repeat(3_000)}`
    h.server.enqueue(textReply('r1', stuck), textReply('r2', VALID))
    const { events, outcome } = await collect(h.createAgent().run('Weather?', { output: Weather }))
    expect(summarize(events)).toContain(
      'user_message: Your final answer does not match the required JSON schema:\n- the answer is not JSON\nAnswer again with only a JSON object that is valid against the schema.',
    )
    expect(outcome).toMatchObject({ reason: 'completed', output: { city: 'Oslo', celsius: 4 } })
  })

  test('interrupted while the answer streams: aborted, no output, no corrective turn', async () => {
    const h = harness()
    h.server.enqueue(stalledChatStream({ id: 'r1', steps: [say('{"city": ')] }))
    const agent = h.createAgent()
    const controller = new AbortController()
    const run = agent.run('Weather?', { output: Weather, signal: controller.signal })
    const events = []
    for await (const event of run) {
      events.push(event)
      if (event.type === 'assistant_text_delta') controller.abort()
    }
    const outcome = await run.done
    expectOrdered(events)
    expect(summarize(events)).toEqual([
      'task_start',
      'user_message: Weather?',
      'turn_start',
      'assistant_text_start',
      'text: {"city": ',
      'assistant_text_end',
      'interrupt',
      'turn_end',
      'task_metadata turns=1 subAgents=0',
      'task_finish aborted: {"city": ',
    ])
    expect(events.at(-1)).toMatchObject({ hasStructuredOutput: false })
    expect(outcome.reason).toBe('aborted')
    expect('output' in outcome).toBe(false)
    expect(summarizeHistory(await agent.history())).toEqual([
      'user: Weather?',
      'assistant aborted: text "{"city": "',
      'task_metadata turns=1 subAgents=0',
    ])
    expect(h.server.requests).toHaveLength(1)
  })

  test('an output schema that is not an object is refused before the task starts', () => {
    const h = harness()
    const agent = h.createAgent()
    const refused = (schema: unknown) => {
      try {
        agent.run('Hi', { output: schema as typeof Weather })
      } catch (error) {
        return AgentError.is(error) ? `${error.code}: ${error.message}` : error
      }
      return 'accepted'
    }
    expect(refused(Type.Array(Type.String()))).toBe(
      'invalid_options: output must describe an object (Type.Object); got "array"',
    )
    expect(refused('not a schema')).toBe('invalid_options: output must be a TypeBox schema')
    expect(agent.running).toBe(false)
  })

  test('a run without output sends no response format and reports no structured output', async () => {
    const h = harness()
    h.server.enqueue(chatStream({ id: 'r1', steps: [say(VALID)] }))
    const { events, outcome } = await collect(h.createAgent().run('Hi'))
    expect(h.server.requests[0]!.body).not.toHaveProperty('response_format')
    expect(events.at(-1)).toMatchObject({ hasStructuredOutput: false })
    expect('output' in outcome).toBe(false)
  })
})

describe('structured output: a refusal', () => {
  const harness = useHarness()
  const chunk = (delta: object, finish: string | null = null) =>
    `data: ${JSON.stringify({ id: 'r1', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`

  test('ends the task as structured_output_invalid at once, in the model’s words, with no corrective turn', async () => {
    const h = harness()
    h.server.enqueue({
      body:
        chunk({ role: 'assistant', content: null, refusal: '' }) +
        chunk({ refusal: "I'm sorry, I can't help with that." }) +
        chunk({}, 'stop') +
        'data: [DONE]\n\n',
    })
    const agent = h.createAgent()
    const { outcome } = await collect(agent.run('Weather in Oslo?', { output: Weather }))
    const reason = "The model refused to answer: I'm sorry, I can't help with that."
    expect(outcome).toMatchObject({ reason: 'structured_output_invalid', errorMessage: reason })
    expect(h.server.requests).toHaveLength(1)
    const history = await agent.history()
    expectValidHistory(history)
    expect(history.at(-2)).toMatchObject({
      type: 'error',
      message: reason,
      code: 'structured_output_invalid',
    })
  })
})
