import type {
  AssistantMessage,
  AssistantPart,
  DeveloperMessage,
  ImagePart,
  SystemMessage,
  ToolResultMessage,
  UserContentPart,
  UserMessage,
} from '@kode/protocol'

// Small builders for histories in request-mapping tests.
let n = 0
const base = () => ({ id: `m${++n}`, createdAt: n })

export const user = (...parts: (string | UserContentPart)[]): UserMessage => ({
  role: 'user',
  ...base(),
  parts: parts.map((p) => (typeof p === 'string' ? { type: 'text', text: p } : p)),
})

export const developer = (...parts: (string | UserContentPart)[]): DeveloperMessage => ({
  role: 'developer',
  ...base(),
  parts: parts.map((p) => (typeof p === 'string' ? { type: 'text', text: p } : p)),
})

export const system = (text: string): SystemMessage => ({
  role: 'system',
  ...base(),
  parts: [{ type: 'text', text }],
})

export const assistant = (
  parts: AssistantPart[],
  from: Partial<Pick<AssistantMessage, 'api' | 'provider' | 'model'>> = {},
): AssistantMessage => ({ role: 'assistant', ...base(), parts, ...from })

export const call = (
  id: string,
  name: string,
  argumentsJson = '{}',
  incomplete?: boolean,
): AssistantPart => ({
  type: 'tool_call',
  id,
  name,
  argumentsJson,
  ...(incomplete ? { incomplete } : {}),
})

export const result = (
  toolCallId: string,
  outputText: string,
  parts: ImagePart[] = [],
  status: ToolResultMessage['status'] = 'success',
): ToolResultMessage => ({
  role: 'tool',
  ...base(),
  toolCallId,
  toolName: 'tool',
  status,
  outputText,
  parts,
})

export const PNG_DATA_URL = 'data:image/png;base64,iVBORw0KGgo='
