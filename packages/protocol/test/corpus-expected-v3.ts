import type { HistoryEvent } from '@kode/protocol'

/**
 * What each file of the version-3 corpus (`fixtures/history/v3/`) decodes to: the records version
 * 3 added (approval requests and decisions, tool progress) and the user message's mode fields;
 * a sub-agent's call recorded in its parent, before and after `subAgentResponseId`; a compaction,
 * and the compactions that saved nothing, marked on an error and an interrupt record (stamped 1).
 * Pinned values, reviewed when written.
 */
export const expectedV3: Record<string, HistoryEvent[]> = {
  'approvals-progress-mode.jsonl': [
    {
      role: 'user',
      id: 'u1',
      createdAt: 1763000000000,
      parts: [
        {
          type: 'text',
          text: 'Delete the build folder',
        },
      ],
      mode: 'koding',
      modeContext: 'Add notes to KODING.md',
    },
    {
      role: 'assistant',
      id: 'a1',
      createdAt: 1763000001000,
      parts: [
        {
          type: 'tool_call',
          id: 'call_1',
          name: 'bash',
          argumentsJson: '{"command":"rm -rf build"}',
        },
        {
          type: 'tool_call',
          id: 'call_2',
          name: 'read_file',
          argumentsJson: '{"path":"README.md"}',
        },
      ],
      stopReason: 'tool_use',
      responseId: 'resp_1',
    },
    {
      type: 'approval_request',
      id: 'q1',
      createdAt: 1763000001100,
      toolCallId: 'call_1',
      toolName: 'bash',
      arguments: '{"command":"rm -rf build"}',
      responseId: 'resp_1',
    },
    {
      type: 'tool_progress',
      id: 'p1',
      createdAt: 1763000001200,
      toolCallId: 'call_2',
      toolName: 'read_file',
      message: 'reading',
      siblingToolCallIds: ['call_1'],
      responseId: 'resp_1',
    },
    {
      role: 'tool',
      id: 't2',
      createdAt: 1763000001300,
      toolCallId: 'call_2',
      toolName: 'read_file',
      status: 'success',
      outputText: '# Readme',
      parts: [],
    },
    {
      type: 'approval_decision',
      id: 'd1',
      createdAt: 1763000002000,
      toolCallId: 'call_1',
      toolName: 'bash',
      approved: false,
      reason: 'not now',
    },
    {
      role: 'tool',
      id: 't1',
      createdAt: 1763000002100,
      toolCallId: 'call_1',
      toolName: 'bash',
      status: 'error',
      outputText: 'denied by the user: not now',
      parts: [],
    },
  ],
  'sub-agent-approvals.jsonl': [
    {
      type: 'approval_request',
      id: 'q1',
      createdAt: 1763000003000,
      toolCallId: 'w1',
      toolName: 'write_file',
      arguments: '{"path":"a.txt"}',
      responseId: 'resp_parent_1',
      sessionId: 'sub_1',
      subAgentCall: { toolCallId: 'p1', sessionId: 'sub_1' },
    },
    {
      type: 'approval_decision',
      id: 'd1',
      createdAt: 1763000004000,
      toolCallId: 'w1',
      toolName: 'write_file',
      approved: true,
      sessionId: 'sub_1',
    },
    {
      type: 'approval_request',
      id: 'q2',
      createdAt: 1763000005000,
      toolCallId: 'w2',
      toolName: 'write_file',
      arguments: '{"path":"b.txt"}',
      responseId: 'resp_parent_1',
      sessionId: 'sub_2',
      subAgentCall: { toolCallId: 'p1', sessionId: 'sub_1' },
      subAgentResponseId: 'resp_sub_2',
    },
  ],
  'compaction.jsonl': [
    {
      type: 'error',
      id: 'e1',
      createdAt: 1764000000000,
      message: 'summary failed: overloaded',
      canRetry: false,
      compaction: { reason: 'threshold', tokensBefore: 150000 },
    },
    {
      type: 'compaction',
      id: 'k1',
      createdAt: 1764000001000,
      summary: 'The user asked for a refactor of the parser; it is half done.',
      firstKeptId: 'u9',
      tokensBefore: 150000,
      tokensAfter: 12000,
      reason: 'overflow',
      usage: { inputTokens: 140000, outputTokens: 900, totalTokens: 140900 },
      costUsd: 0.43,
      model: 'claude-sonnet-4-5',
      retries: ['overloaded_error: retrying in 1s'],
    },
    {
      type: 'interrupt',
      id: 'i1',
      createdAt: 1764000002000,
      compaction: {
        reason: 'manual',
        tokensBefore: 20000,
        usage: { inputTokens: 19000 },
        model: 'claude-sonnet-4-5',
      },
    },
  ],
}
