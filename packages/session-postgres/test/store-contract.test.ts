import { createPostgresSessionStore } from '@kode/session-postgres'
import { describeSessionStoreContract } from '../../../test/contract/session-store-contract.js'
import { dropSchema, freshSchema, postgresUrl } from '../../../test/postgres/schemas.js'

// The same contract the file and memory stores pass, against a real Postgres.

describeSessionStoreContract(
  'postgres',
  () => {
    const schema = freshSchema()
    return {
      open: (clock) => createPostgresSessionStore({ connectionString: postgresUrl(), schema, ...clock }),
      cleanup: () => dropSchema(schema),
    }
  },
  { follows: true },
)
