import type { AssistantMessage, HistoryEvent } from '@kode/protocol'
import { exportHtml } from '@kode/session'
import { describe, expect, test } from 'vitest'

// A refusal is no error (no errorMessage), yet the reader must see the model declined, and
// Anthropic's explanation is meant to be shown to the user.
const ask: HistoryEvent = { role: 'user', id: 'u1', createdAt: 1, parts: [{ type: 'text', text: 'Do it' }] }

describe('a refusal in the export', () => {
  test("Anthropic's: marked refused, its explanation shown, escaped", () => {
    const refused: AssistantMessage = {
      role: 'assistant',
      id: 'a1',
      createdAt: 2,
      parts: [],
      rawStopReason: 'refusal',
      stopDetails: { category: 'cyber', explanation: 'Not this <img src=x onerror=alert(1)>' },
    }
    const page = exportHtml([ask, refused])
    expect(page).toContain('<span class="badge refused">refused</span>')
    expect(page).toContain('Not this &lt;img src=x onerror=alert(1)&gt;')
    expect(page).not.toContain('<img src=x')
  })

  test("OpenAI's: its text shown as written, the message marked refused", () => {
    const refused: AssistantMessage = {
      role: 'assistant',
      id: 'a1',
      createdAt: 2,
      parts: [{ type: 'text', text: "I can't help with that." }],
      stopReason: 'stop',
      stopDetails: { category: 'refusal' },
    }
    const page = exportHtml([ask, refused])
    expect(page).toContain('<span class="badge refused">refused</span>')
    expect(page).toContain('help with that.')
  })

  test('an answer is not marked', () => {
    const answer: AssistantMessage = {
      role: 'assistant',
      id: 'a1',
      createdAt: 2,
      parts: [{ type: 'text', text: 'Done.' }],
      stopReason: 'stop',
    }
    expect(exportHtml([ask, answer])).not.toContain('badge refused')
  })
})
