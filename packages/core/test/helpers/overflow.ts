import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { ScriptedResponse } from '@kode/providers/testing'

/** The recorded Chat Completions context-overflow error (the providers' tests check its classification). */
export const OVERFLOW: ScriptedResponse = {
  status: 400,
  body: readFileSync(
    join(
      import.meta.dirname,
      '../../../providers/test/fixtures/errors/context-overflow/openai-chat.400.json',
    ),
    'utf8',
  ),
}
