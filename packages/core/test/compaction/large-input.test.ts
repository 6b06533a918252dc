import { describe, expect, test } from 'vitest'
import { textReply } from '../helpers/chat-wire.js'
import { collect, useHarness } from '../helpers/harness.js'
import { OVERFLOW } from '../helpers/overflow.js'
import { compactionsOf, readChunk, readChunkSession } from '../helpers/small-window.js'

/** Why the overflow's compaction made no room: all that is left is what it always keeps. */
const NOTHING_LEFT =
  "Compaction found nothing more to summarise: it always keeps the task's new input, a paused turn to carry on and a response whose calls wait for their results. "

describe('a task whose input alone is larger than the kept part may be', () => {
  const h = useHarness()

  test('compacts the history before it and sends the input whole', async () => {
    await h().store.create({ id: 'long' })
    // About 40,000 estimated tokens of earlier work in gpt-4o's 128k window (111,616 input tokens).
    await h().store.append(
      'long',
      readChunkSession(10, (n) => `chunk ${n}: ${'x'.repeat(16_000)}`, { id: 'done', text: 'Read them.' }),
    )
    const summaries: string[] = []
    const agent = h().createAgent({
      sessionId: 'long',
      tools: [readChunk],
      compaction: {
        summarize: async ({ transcript }) => {
          summaries.push(transcript)
          return 'Ten chunks were read.'
        },
      },
    })
    // About 50,000 tokens: more than the 40% the kept part may take, but the request fits the
    // window once the history before it is summarised.
    const document = `Summarise this document: ${'lorem ipsum dolor sit amet '.repeat(7_400)}END-OF-DOCUMENT`
    h().server.enqueue(textReply('r1', 'A summary of the document.'))

    const { outcome } = await collect(agent.run(document))

    expect(outcome.reason).toBe('completed')
    const [record] = compactionsOf(await agent.history())
    expect(record).toBeDefined()
    expect(summaries[0]).not.toContain('Summarise this document')
    const body = h().server.requests[0]!.rawBody
    expect(body).toContain('Ten chunks were read.')
    expect(body).toContain(document)
  })

  test('too large for the window fails its task, and the next task summarises it', async () => {
    await h().store.create({ id: 'long' })
    await h().store.append(
      'long',
      readChunkSession(10, (n) => `chunk ${n}: ${'x'.repeat(16_000)}`, { id: 'done', text: 'Read them.' }),
    )
    const summaries: string[] = []
    const agent = h().createAgent({
      sessionId: 'long',
      tools: [readChunk],
      compaction: {
        summarize: async ({ transcript }) => {
          summaries.push(transcript)
          return `Summary ${summaries.length}.`
        },
      },
    })
    // About 125,000 tokens: more than the whole window.
    const document = `Summarise this: ${'lorem ipsum dolor sit amet '.repeat(18_500)}END-OF-DOCUMENT`
    h().server.enqueue(OVERFLOW)
    const first = await collect(agent.run(document))
    expect(first.outcome.reason).toBe('error')
    expect(first.outcome.errorMessage).toMatch(/^The request does not fit the model's context window/)
    // The history before it was summarised already: the message says why no compaction helps.
    expect(first.outcome.errorMessage).toContain(NOTHING_LEFT)
    expect(h().server.requests[0]!.rawBody).toContain(document)

    h().server.enqueue(textReply('r2', 'Hi.'))
    const second = await collect(agent.run('Never mind that, just say hi'))
    expect(second.outcome.reason).toBe('completed')
    expect(summaries.at(-1)).toContain('Summarise this: ')
    const body = h().server.requests[1]!.rawBody
    expect(body).not.toContain('END-OF-DOCUMENT')
    expect(body).toContain('Never mind that, just say hi')
  })
})
