import { createPostgresSessionStore } from '@kode/session-postgres'
import pg from 'pg'
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
      // A row edited by hand: the metadata column holds no object.
      async corruptMetadata(id) {
        const client = new pg.Client({ connectionString: postgresUrl() })
        await client.connect()
        try {
          await client.query(`update "${schema}".sessions set meta = 'null'::jsonb where id = $1`, [id])
        } finally {
          await client.end()
        }
      },
    }
  },
  { follows: true, corruptible: true },
)
