import { describe, expect, test } from 'vitest'
import { chatStream, say } from './helpers/chat-wire.js'
import { collect, useHarness } from './helpers/harness.js'
import { expectOrdered, expectValidHistory } from './helpers/history-checks.js'
import { summarize, summarizeHistory } from './helpers/summarize.js'

const harness = useHarness()

const rateLimited = {
  status: 429,
  headers: { 'retry-after': '0' },
  body: JSON.stringify({ error: { message: 'Rate limit reached', type: 'rate_limit_exceeded' } }),
}

/** A stream cut (connection reset) after roughly the first third of its bytes. */
function cutStream(id: string, text: string) {
  const full = chatStream({ id, steps: [say(text)] })
  const bytes = (full.body as string[]).join('').length
  return { ...full, resetAfterBytes: Math.floor(bytes / 3) }
}

describe('provider errors', () => {
  test('a 429 before any output is retried by the transport and announced as a retrying error', async () => {
    const h = harness()
    h.server.enqueue(rateLimited, chatStream({ id: 'r1', steps: [say('Hello.')] }))
    const agent = h.createAgent()
    const { events, outcome } = await collect(agent.run('Hi'))

    expectOrdered(events)
    expect(summarize(events)).toEqual([
      'task_start',
      'user_message: Hi',
      'turn_start',
      expect.stringMatching(/^error \(retrying\): .*Rate limit reached.* \(retrying in \d+ ms\)$/),
      'assistant_text_start',
      'text: Hello.',
      'assistant_text_end',
      'response_complete: Hello.',
      'usage 100/20',
      'context_usage 120/128000',
      'turn_end',
      'task_metadata turns=1 subAgents=0',
      'task_finish completed: Hello.',
    ])
    expect(outcome).toMatchObject({ reason: 'completed', text: 'Hello.' })
    // The notice is kept, so replay shows it where it was; the attempt billed nothing.
    const history = await agent.history()
    expect(summarizeHistory(history)).toEqual([
      'user: Hi',
      expect.stringMatching(/^error \(retry\): .*Rate limit reached.* \(retrying in \d+ ms\)$/),
      'assistant stop: text "Hello."',
      'task_metadata turns=1 subAgents=0',
    ])
    expect(history[1]).toEqual({
      type: 'error',
      id: expect.any(String),
      createdAt: expect.any(Number),
      message: expect.stringMatching(/Rate limit reached/),
      canRetry: true,
      retry: true,
      status: 429,
      code: 'rate_limit_exceeded',
    })
    expect(h.server.requests).toHaveLength(2)
  })

  test('a stream cut after output is retried by the engine with the same history; the partial is discarded', async () => {
    const h = harness()
    const text = 'The quick brown fox jumps over the lazy dog and keeps on running far away.'
    h.server.enqueue(cutStream('r1', text), chatStream({ id: 'r2', steps: [say(text)] }))
    const agent = h.createAgent()
    const { events, outcome } = await collect(agent.run('Tell me'))

    expectOrdered(events)
    const lines = summarize(events)
    // The cut attempt's text stream is closed before the notice; the new attempt streams anew.
    expect(lines).toEqual([
      'task_start',
      'user_message: Tell me',
      'turn_start',
      'assistant_text_start',
      expect.stringMatching(/^text: The/),
      'assistant_text_end',
      expect.stringMatching(/^error \(retrying\): .* \(retrying in \d+ ms\)$/),
      'assistant_text_start',
      `text: ${text}`,
      'assistant_text_end',
      `response_complete: ${text}`,
      'usage 100/20',
      'context_usage 120/128000',
      'turn_end',
      'task_metadata turns=1 subAgents=0',
      `task_finish completed: ${text}`,
    ])
    // What streamed before the cut is a strict beginning of the answer.
    const partial = lines[4]!.slice('text: '.length)
    expect(text.startsWith(partial) && partial.length < text.length).toBe(true)
    expect(outcome.reason).toBe('completed')
    expect(summarizeHistory(await agent.history())).toEqual([
      'user: Tell me',
      expect.stringMatching(/^error \(retry\): .* \(retrying in \d+ ms\)$/),
      `assistant stop: text "${text}"`,
      'task_metadata turns=1 subAgents=0',
    ])
    expect(h.server.requests).toHaveLength(2)
    expect(h.server.requests[1]!.body).toEqual(h.server.requests[0]!.body)
  })

  test('a fatal error persists an error record and ends the task with reason error; the iterator completes', async () => {
    const h = harness()
    h.server.enqueue({
      status: 400,
      body: JSON.stringify({
        error: { message: 'Invalid model', type: 'invalid_request_error', code: 'model_not_found' },
      }),
    })
    const agent = h.createAgent()
    const { events, outcome } = await collect(agent.run('Hi'))

    expectOrdered(events)
    const lines = summarize(events)
    expect(lines).toEqual([
      'task_start',
      'user_message: Hi',
      'turn_start',
      expect.stringMatching(/^error: .*Invalid model/),
      'turn_end',
      'task_metadata turns=1 subAgents=0',
      'task_finish error: ',
    ])
    const history = await agent.history()
    expectValidHistory(history)
    expect(summarizeHistory(history)).toEqual([
      'user: Hi',
      expect.stringMatching(/^error: .*Invalid model/),
      'task_metadata turns=1 subAgents=0',
    ])
    expect(history[1]).toMatchObject({ type: 'error', canRetry: false, status: 400, code: 'model_not_found' })
    expect(outcome.reason).toBe('error')
    expect(outcome.errorMessage).toMatch(/Invalid model/)
    expect(h.server.requests).toHaveLength(1)
  })

  test('when retries run out after output, the streamed text is kept as an API-error message before the error record', async () => {
    const h = harness()
    const text = 'A long answer that will be cut off before it can finish streaming to the client.'
    h.server.enqueue(cutStream('r1', text), cutStream('r2', text))
    const agent = h.createAgent({ retry: { maxAttempts: 2, baseDelayMs: 1 } })
    const { events, outcome } = await collect(agent.run('Go'))

    expectOrdered(events)
    const history = await agent.history()
    expectValidHistory(history)
    const kept = history[2]
    expect(kept).toMatchObject({ role: 'assistant', stopReason: 'error', isApiError: true, responseId: 'r2' })
    // The second attempt's text as far as it streamed: kept, and the task's result.
    const partial = (kept as { parts: { text: string }[] }).parts[0]!.text
    expect(text.startsWith(partial) && partial.length > 0).toBe(true)
    expect(summarize(events)).toEqual([
      'task_start',
      'user_message: Go',
      'turn_start',
      'assistant_text_start',
      expect.stringMatching(/^text: A/),
      'assistant_text_end',
      expect.stringMatching(/^error \(retrying\): /),
      'assistant_text_start',
      `text: ${partial}`,
      'assistant_text_end',
      expect.stringMatching(/^error: /),
      'turn_end',
      'task_metadata turns=1 subAgents=0',
      `task_finish error: ${partial}`,
    ])
    expect(summarizeHistory(history)).toEqual([
      'user: Go',
      expect.stringMatching(/^error \(retry\): /),
      `assistant error api-error: text "${partial}"`,
      expect.stringMatching(/^error: /),
      'task_metadata turns=1 subAgents=0',
    ])
    expect(outcome.reason).toBe('error')
    expect(outcome.text).toBe(partial)
  })

  test('transport retries that run out before any output end the task with an error', async () => {
    const h = harness()
    const unavailable = { status: 503, body: JSON.stringify({ error: { message: 'Service Unavailable' } }) }
    h.server.enqueue(unavailable, unavailable)
    const agent = h.createAgent({ client: h.client({ retry: { maxAttempts: 2, baseDelayMs: 1 } }) })
    const { events, outcome } = await collect(agent.run('Hi'))

    expectOrdered(events)
    expect(summarize(events)).toEqual([
      'task_start',
      'user_message: Hi',
      'turn_start',
      expect.stringMatching(/^error \(retrying\): .*Service Unavailable/),
      expect.stringMatching(/^error: .*Service Unavailable/),
      'turn_end',
      'task_metadata turns=1 subAgents=0',
      'task_finish error: ',
    ])
    expect(outcome.reason).toBe('error')
    expect(summarizeHistory(await agent.history())).toEqual([
      'user: Hi',
      expect.stringMatching(/^error \(retry\): .*Service Unavailable/),
      expect.stringMatching(/^error: .*Service Unavailable/),
      'task_metadata turns=1 subAgents=0',
    ])
  })
})
