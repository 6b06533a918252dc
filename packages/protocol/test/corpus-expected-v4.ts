import type { HistoryEvent } from '@kode/protocol'

/**
 * What each file of the version-4 corpus (`fixtures/history/v4/`) decodes to: image URLs whose
 * scheme is not lower case (`HTTPS:`, `Data:`), which version 4 takes, in a user, tool and
 * developer message, beside lines that need nothing newer (stamped 1). Pinned values, reviewed
 * when written.
 */
export const expectedV4: Record<string, HistoryEvent[]> = {
  'image-url-scheme-case.jsonl': [
    {
      role: 'user',
      id: 'u1',
      createdAt: 1764000000000,
      parts: [
        {
          type: 'text',
          text: 'What is in these?',
        },
        {
          type: 'image_url',
          url: 'HTTPS://example.com/cat.png',
        },
        {
          type: 'image_url',
          url: 'Data:image/png;base64,iVBORw0KGgo=',
        },
      ],
    },
    {
      role: 'assistant',
      id: 'a1',
      createdAt: 1764000001000,
      parts: [
        {
          type: 'tool_call',
          id: 'c1',
          name: 'screenshot',
          argumentsJson: '{}',
        },
      ],
      stopReason: 'tool_use',
      model: 'claude-sonnet-4-5',
      provider: 'anthropic',
      api: 'anthropic',
    },
    {
      role: 'tool',
      id: 't1',
      createdAt: 1764000002000,
      toolCallId: 'c1',
      toolName: 'screenshot',
      status: 'success',
      outputText: 'A screenshot.',
      parts: [
        {
          type: 'image_url',
          url: 'DATA:image/png;base64,iVBORw0KGgo=',
        },
      ],
    },
    {
      role: 'developer',
      id: 'd1',
      createdAt: 1764000003000,
      parts: [
        {
          type: 'image_url',
          url: 'Http://example.com/rules.png',
        },
      ],
    },
    {
      role: 'user',
      id: 'u2',
      createdAt: 1764000004000,
      parts: [
        {
          type: 'image_url',
          url: 'https://example.com/dog.png',
        },
      ],
    },
  ],
}
