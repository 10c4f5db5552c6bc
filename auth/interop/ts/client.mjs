// The MCP TypeScript SDK client against rpcedge with OAuth: its
// ClientCredentialsProvider discovers the protected resource metadata
// from the 401, the authorization server's metadata, gets a token with
// client credentials, and the client calls the tools.
// Usage: node client.mjs MCP_URL CLIENT_ID CLIENT_SECRET SCOPE
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ClientCredentialsProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';

const [url, clientId, clientSecret, scope] = process.argv.slice(2);
const authProvider = new ClientCredentialsProvider({ clientId, clientSecret, scope });
const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider });
const client = new Client({ name: 'rpcedge-auth-interop', version: '1.0.0' });
await client.connect(transport);
const echo = await client.callTool({ name: 'echo', arguments: { text: 'hello from the TypeScript SDK' } });
const add = await client.callTool({ name: 'add', arguments: { a: 2, b: 40 } });
const tools = await client.listTools();
console.log(JSON.stringify({
  echo: echo.content[0].text,
  add: add.content[0].text,
  tools: tools.tools.map((t) => t.name).sort(),
  token: (await authProvider.tokens())?.access_token?.split('.').length,
}));
await client.close();
