import type { HistoryEvent } from '@kode/protocol'

/**
 * What each file of the version-2 corpus (`fixtures/history/v2/`) decodes to: the `server_tool`
 * part version 2 added (Anthropic's server tools, with fields Kode has no name for, and Gemini's
 * code execution), on lines stamped 2, beside lines that need nothing new, stamped 1.
 * Pinned values, reviewed when written.
 */
export const expectedV2: Record<string, HistoryEvent[]> = {
  'server-tools.jsonl': [
    {
      role: 'user',
      id: 'u1',
      createdAt: 1762000000000,
      parts: [{ type: 'text', text: 'What is new in Kode? Then compute 2+2 in Python.' }],
    },
    {
      role: 'assistant',
      id: 'a1',
      createdAt: 1762000001000,
      parts: [
        { type: 'text', text: 'Searching.' },
        {
          type: 'server_tool',
          format: 'anthropic',
          block: {
            type: 'server_tool_use',
            id: 'srvtoolu_01',
            name: 'web_search',
            input: { query: 'kode agent runtime' },
            caller: { type: 'direct' },
          },
        },
        {
          type: 'server_tool',
          format: 'anthropic',
          block: {
            type: 'web_search_tool_result',
            tool_use_id: 'srvtoolu_01',
            content: [
              {
                type: 'web_search_result',
                url: 'https://example.com/kode',
                title: 'Kode',
                encrypted_content: 'EqgfCioIARgBIiQ3',
                page_age: 'November 1, 2025',
              },
            ],
          },
        },
        { type: 'text', text: 'Kode is an embeddable agent runtime.' },
      ],
      usage: { inputTokens: 2100, outputTokens: 80, totalTokens: 2180 },
      stopReason: 'stop',
      rawStopReason: 'end_turn',
      responseId: 'msg_01',
      model: 'claude-sonnet-4-5',
      provider: 'anthropic',
      api: 'anthropic',
      providerFields: {
        format: 'anthropic',
        fields: { container: { id: 'container_01', expires_at: '2025-11-01T10:00:00Z' } },
      },
    },
    {
      role: 'assistant',
      id: 'a2',
      createdAt: 1762000002000,
      parts: [
        {
          type: 'server_tool',
          format: 'google',
          block: { type: 'executableCode', executableCode: { language: 'PYTHON', code: 'print(2 + 2)' } },
        },
        {
          type: 'server_tool',
          format: 'google',
          block: {
            type: 'codeExecutionResult',
            codeExecutionResult: { outcome: 'OUTCOME_OK', output: '4\n' },
          },
        },
        { type: 'text', text: '2 + 2 is 4.' },
      ],
      stopReason: 'stop',
      rawStopReason: 'STOP',
      model: 'gemini-2.5-flash',
      provider: 'google',
      api: 'google',
    },
    {
      type: 'task_metadata',
      id: 'm1',
      createdAt: 1762000003000,
      metadata: { main: { model: 'gemini-2.5-flash', turnCount: 2 }, subAgents: [] },
    },
  ],
}
