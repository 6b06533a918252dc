/**
 * A realistic mixed history of `n` records: user prompts, assistant turns with thinking,
 * signatures, text and tool calls, tool results with long outputs, images, errors and metadata.
 * Deterministic (no randomness), so runs compare.
 */
export function realisticHistory(n) {
  const out = []
  let t = 1_763_780_000_000
  let i = 0
  const id = () => `00000000-0000-4000-8000-${String(i++).padStart(12, '0')}`
  const prose = (k) => 'The quick brown fox jumps over the lazy dog — “naïve” café. '.repeat(k)
  while (out.length < n) {
    const turn = out.length
    out.push({
      role: 'user',
      id: id(),
      createdAt: t++,
      parts: [{ type: 'text', text: `Task ${turn}: ${prose(2)}` }],
    })
    for (let step = 0; step < 3 && out.length < n; step++) {
      const callId = `toolu_${turn}_${step}`
      out.push({
        role: 'assistant',
        id: id(),
        createdAt: t++,
        parts: [
          { type: 'thinking_text', text: prose(4) },
          {
            type: 'thinking_signature',
            signature: 'EqQBCkYIBxgCKkB'.repeat(20),
            format: 'anthropic',
            model: 'claude-sonnet-4-5',
          },
          { type: 'text', text: prose(3) },
          {
            type: 'tool_call',
            id: callId,
            name: 'read_file',
            argumentsJson: `{"path":"src/file_${step}.ts"}`,
          },
        ],
        usage: {
          inputTokens: 12_000 + turn,
          outputTokens: 420,
          totalTokens: 12_420 + turn,
          cacheReadTokens: 11_000,
        },
        stopReason: 'tool_use',
        rawStopReason: 'tool_use',
        responseId: `msg_${turn}_${step}`,
        model: 'claude-sonnet-4-5',
        provider: 'anthropic',
        api: 'anthropic',
        costUsd: 0.0123,
        durationMs: 2100,
      })
      if (out.length >= n) break
      out.push({
        role: 'tool',
        id: id(),
        createdAt: t++,
        toolCallId: callId,
        toolName: 'read_file',
        status: step === 2 ? 'error' : 'success',
        outputText: `export const x${step} = 1\n`.repeat(60),
        parts: step === 1 ? [{ type: 'image_file', path: 'shots/a.png', mimeType: 'image/png' }] : [],
      })
    }
    if (out.length < n) {
      out.push({
        role: 'assistant',
        id: id(),
        createdAt: t++,
        parts: [{ type: 'text', text: prose(6) }],
        usage: { inputTokens: 13_000, outputTokens: 300, totalTokens: 13_300 },
        stopReason: 'stop',
        model: 'claude-sonnet-4-5',
      })
    }
    if (turn % 50 === 0 && out.length < n) {
      out.push({
        type: 'error',
        id: id(),
        createdAt: t++,
        message: '529 overloaded',
        canRetry: true,
        status: 529,
      })
    }
  }
  return out.slice(0, n)
}

/**
 * A history of `n` records whose sizes vary as in a coding agent's sessions, by our assumptions
 * (not measured from real sessions): short prompts, assistant messages with optional thinking and
 * text and one or two tool calls (an edit's arguments are larger), and tool results that are mostly
 * small with a long tail (half under 400 B, 3% of 8-24 kB). Text is ASCII except in about one
 * record in twenty. Deterministic (a seeded generator), so runs compare.
 */
export function mixedSizeHistory(n) {
  let seed = 0x9e3779b9
  const random = () => {
    seed = (seed + 0x6d2b79f5) >>> 0
    let t = seed
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (min, max) => min + Math.floor(random() * (max - min + 1))
  const WORDS = ['const', 'value', 'return', 'parser', 'test', 'index', 'cache', 'stream', 'the', 'file']
  const text = (chars) => {
    let out = ''
    while (out.length < chars) out += `${WORDS[int(0, WORDS.length - 1)]} `
    // About one record in twenty carries non-ASCII text (names, quotes, dashes).
    return random() < 0.05 ? `${out.slice(0, chars)} — “naïve” café` : out.slice(0, chars)
  }
  const toolOutput = () => {
    const r = random()
    if (r < 0.5) return text(int(40, 400))
    if (r < 0.85) return text(int(400, 2000))
    if (r < 0.97) return text(int(2000, 8000))
    return text(int(8000, 24000))
  }
  const out = []
  let t = 1_763_780_000_000
  let i = 0
  const id = () => `00000000-0000-4000-8000-${String(i++).padStart(12, '0')}`
  while (out.length < n) {
    const task = out.length
    out.push({ role: 'user', id: id(), createdAt: t++, parts: [{ type: 'text', text: text(int(60, 400)) }] })
    const steps = int(2, 6)
    for (let step = 0; step < steps && out.length < n; step++) {
      const parts = []
      if (random() < 0.5) {
        parts.push({ type: 'thinking_text', text: text(int(150, 1200)) })
        parts.push({
          type: 'thinking_signature',
          signature: 'EqQBCkYIBxgCKkB'.repeat(int(8, 32)),
          format: 'anthropic',
          model: 'claude-sonnet-4-5',
        })
      }
      if (random() < 0.6) parts.push({ type: 'text', text: text(int(40, 400)) })
      const calls = Array.from({ length: random() < 0.2 ? 2 : 1 }, (_, k) => {
        const edit = random() < 0.1
        return {
          type: 'tool_call',
          id: `toolu_${task}_${step}_${k}`,
          name: edit ? 'edit_file' : 'read_file',
          argumentsJson: JSON.stringify({
            path: `src/${step}.ts`,
            ...(edit ? { content: text(int(300, 2500)) } : {}),
          }),
        }
      })
      parts.push(...calls)
      out.push({
        role: 'assistant',
        id: id(),
        createdAt: t++,
        parts,
        usage: {
          inputTokens: 12_000 + task,
          outputTokens: 300,
          totalTokens: 12_300 + task,
          cacheReadTokens: 11_000,
        },
        stopReason: 'tool_use',
        responseId: `msg_${task}_${step}`,
        model: 'claude-sonnet-4-5',
        provider: 'anthropic',
        api: 'anthropic',
        costUsd: 0.0123,
        durationMs: 2100,
      })
      for (const call of calls) {
        if (out.length >= n) break
        out.push({
          role: 'tool',
          id: id(),
          createdAt: t++,
          toolCallId: call.id,
          toolName: call.name,
          status: 'success',
          outputText: toolOutput(),
          parts: [],
        })
      }
    }
    if (out.length < n) {
      out.push({
        role: 'assistant',
        id: id(),
        createdAt: t++,
        parts: [{ type: 'text', text: text(int(100, 1200)) }],
        usage: { inputTokens: 13_000, outputTokens: 300, totalTokens: 13_300 },
        stopReason: 'stop',
        model: 'claude-sonnet-4-5',
      })
    }
  }
  return out.slice(0, n)
}
