import { type Static, Type } from '@sinclair/typebox'
import { record } from './messages.js'

/** The call of this session that runs the sub-agent a pending call waits in (directly or deeper). */
export const SubAgentCall = Type.Object(
  {
    /** The id of this session's tool call that ran the sub-agent. */
    toolCallId: Type.String(),
    /** The sub-agent's session, which that call started. */
    sessionId: Type.String(),
  },
  { $id: 'SubAgentCall' },
)
export type SubAgentCall = Static<typeof SubAgentCall>

/**
 * A tool call that waits for the user's approval. It stays pending until an
 * `approval_decision` for the same call follows (or a tool result answers it, after an
 * interrupt), so a process that reads the history finds what awaits a decision. A call of a
 * sub-agent is recorded in its own session and, with `sessionId` and `subAgentCall`, in the
 * session of every parent above it, so the parent's history alone says what its task awaits.
 */
export const ApprovalRequestRecord = record(
  'approval_request',
  {
    toolCallId: Type.String(),
    toolName: Type.String(),
    /** The call's arguments as the model wrote them (JSON text). */
    arguments: Type.String(),
    /**
     * The provider's id of the response that asked for the call (for a sub-agent's call, the
     * response of this session that ran the sub-agent).
     */
    responseId: Type.Optional(Type.String()),
    /** The session the call waits in, when it is a sub-agent's (absent: this session's own call). */
    sessionId: Type.Optional(Type.String()),
    /** For a sub-agent's call: this session's call that runs that sub-agent. */
    subAgentCall: Type.Optional(SubAgentCall),
    /**
     * For a sub-agent's call: the provider's id of the sub-agent's response that asked for it (in
     * the session `sessionId` names), which its approval events carry. Absent in histories written
     * before it was recorded: their replay shows `responseId`.
     */
    subAgentResponseId: Type.Optional(Type.String()),
  },
  'ApprovalRequestRecord',
)
export type ApprovalRequestRecord = Static<typeof ApprovalRequestRecord>

/** The user's decision on a call that waited for approval: what was approved or denied, and why. */
export const ApprovalDecisionRecord = record(
  'approval_decision',
  {
    toolCallId: Type.String(),
    toolName: Type.String(),
    approved: Type.Boolean(),
    /** Why, as the host passed it (the denied call's result tells the model). */
    reason: Type.Optional(Type.String()),
    /** The session the call waits in, when it is a sub-agent's (absent: this session's own call). */
    sessionId: Type.Optional(Type.String()),
    /**
     * What made the decision: `continue` (the host's decisions, or those a parent passed on to its
     * sub-agent) or `new_message` (the denials of what was pending when the user sent a new message
     * instead, which begin a new task). A reader tells a new task by this, not by `reason`, which
     * the host chooses. Absent in histories written before it was recorded: there a denial with
     * the reason `the user sent a new message instead` is a new message's. Other values (a newer
     * release's) read as `continue`.
     */
    decidedBy: Type.Optional(Type.String()),
  },
  'ApprovalDecisionRecord',
)
export type ApprovalDecisionRecord = Static<typeof ApprovalDecisionRecord>

/**
 * Progress a running tool reported (the specification's progress message): its text, the call it
 * belongs to and the other calls of the same response, which were running beside it.
 */
export const ToolProgressRecord = record(
  'tool_progress',
  {
    toolCallId: Type.String(),
    toolName: Type.String(),
    message: Type.String(),
    /** The ids of the other tool calls of the same response. */
    siblingToolCallIds: Type.Array(Type.String()),
    responseId: Type.Optional(Type.String()),
  },
  'ToolProgressRecord',
)
export type ToolProgressRecord = Static<typeof ToolProgressRecord>
