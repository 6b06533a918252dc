import type { AssistantMessage, HistoryEvent } from '@kode/protocol'
import { validateEvent } from '@kode/protocol'
import { deriveReplayEvents, exportHtml } from '@kode/session'
import { describe, expect, test } from 'vitest'

const web = {
  url: 'https://example.org/press',
  title: 'Press <b>history</b>',
  citedText: 'The press dates from about 1440.',
  providerFields: { format: 'anthropic', fields: { type: 'web_search_result_location' } },
}
const hostile = { url: 'javascript:alert(1)', title: 'Click me' }
const document = { title: 'Contract.pdf', citedText: `Term: ${'two years. '.repeat(60)}` }
const history: HistoryEvent[] = [
  { role: 'user', id: 'u1', createdAt: 1, parts: [{ type: 'text', text: 'When?' }] },
  {
    role: 'assistant',
    id: 'a1',
    createdAt: 2,
    responseId: 'msg_1',
    parts: [
      { type: 'text', text: 'About 1440. ', citations: [web, hostile] },
      { type: 'text', text: 'It runs two years.', citations: [document] },
    ],
    stopReason: 'stop',
  } satisfies AssistantMessage,
]

describe('citations in replay and export', () => {
  test('replay carries every text part citations on response_complete, in order', () => {
    const complete = deriveReplayEvents(history, { sessionId: 's' }).find(
      (e) => e.type === 'response_complete',
    )
    expect(complete).toEqual({
      type: 'response_complete',
      sessionId: 's',
      timestamp: 2,
      responseId: 'msg_1',
      content: 'About 1440. It runs two years.',
      citations: [web, hostile, document],
    })
    expect(() => validateEvent(complete)).not.toThrow()
  })

  test('the export lists the sources under their text: web links only, escaped, long quotes cut', () => {
    const page = exportHtml(history)
    expect(page).toContain(
      '<a href="https://example.org/press" rel="noopener noreferrer">Press &lt;b&gt;history&lt;/b&gt;</a> <q>The press dates from about 1440.</q>',
    )
    // Not a web address: named, never a link.
    expect(page).toContain('<li>Click me</li>')
    expect(page).not.toContain('javascript:')
    expect(page).toContain('<li>Contract.pdf <q>Term: two years.')
    expect(page).not.toContain('two years. '.repeat(60))
    expect(page.indexOf('Press &lt;b&gt;')).toBeLessThan(page.indexOf('It runs two years.'))
  })
})
