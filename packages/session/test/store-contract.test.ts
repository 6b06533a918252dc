import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createMemorySessionStore } from '@kode/session'
import { createFileSessionStore, FILE_READ_BATCH_SIZE } from '@kode/session/file'
import { describeSessionStoreContract } from '../../../test/contract/session-store-contract.js'

// The file and memory stores run the shared contract; other stores run it from their own tests.

describeSessionStoreContract(
  'memory',
  () => ({
    open: (clock) => createMemorySessionStore(clock),
    cleanup() {},
  }),
  { follows: true },
)

describeSessionStoreContract(
  'file',
  () => {
    const dir = mkdtempSync(join(tmpdir(), 'kode-store-'))
    return {
      open: (clock) => createFileSessionStore({ dir, fsync: false, ...clock }),
      cleanup: () => rmSync(dir, { recursive: true, force: true }),
      corruptMetadata: (id) => writeFileSync(join(dir, id, 'session.json'), '{"v": 1, "id": '),
    }
  },
  { follows: false, readBatchSize: FILE_READ_BATCH_SIZE, corruptible: true },
)
