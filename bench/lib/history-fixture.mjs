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
