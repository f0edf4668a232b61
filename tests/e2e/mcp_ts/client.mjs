// Drives a CodeWeaver MCP server with the official TypeScript SDK client, a second MCP
// implementation beside the Python SDK (tests/e2e/test_mcp_typescript_client.py runs it).
//
//   node client.mjs --question TEXT [--search TOOL=QUERY]... -- COMMAND [ARG]...   (stdio)
//   node client.mjs --question TEXT [--search TOOL=QUERY]... --url URL              (HTTP)
//
// Over stdio the client spawns COMMAND with this process's environment and working
// directory. Over streamable HTTP it sends `Authorization: Bearer $CODEWEAVER_MCP_TOKEN`
// when that variable is set (an environment variable, not an argument: `ps` shows those).
//
// It lists the tools, calls `ask` (and each `--search`), and prints one JSON object on
// stdout. The SDK's client checks each result's `structuredContent` against the tool's
// `outputSchema` (Ajv) and throws when it does not match. Any error, a tool without an
// outputSchema, a tool result with `isError` or without structured content: the message
// on stderr and exit status 1 (the report is still printed when there is one).

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";

const USAGE =
  "usage: node client.mjs --question TEXT [--search TOOL=QUERY]... (--url URL | -- COMMAND [ARG]...)";
const TIMEOUT_MS = 120_000; // a whole answer; progress notifications reset it

function parseArgs(argv) {
  const options = { question: null, url: null, searches: [], command: null, args: [] };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) throw new Error(`${arg} needs a value\n${USAGE}`);
      return argv[++i];
    };
    if (arg === "--") {
      [options.command, ...options.args] = argv.slice(i + 1);
      break;
    } else if (arg === "--question") {
      options.question = value();
    } else if (arg === "--url") {
      options.url = value();
    } else if (arg === "--search") {
      const spec = value();
      const at = spec.indexOf("=");
      if (at < 1) throw new Error(`--search wants TOOL=QUERY, not ${JSON.stringify(spec)}`);
      options.searches.push({ tool: spec.slice(0, at), query: spec.slice(at + 1) });
    } else {
      throw new Error(`unknown argument ${JSON.stringify(arg)}\n${USAGE}`);
    }
  }
  if (options.question === null) throw new Error(`--question is required\n${USAGE}`);
  if ((options.url === null) === (options.command == null)) {
    throw new Error(`give either --url or -- COMMAND\n${USAGE}`);
  }
  return options;
}

function stringEnv() {
  return Object.fromEntries(
    Object.entries(process.env).filter(([, value]) => typeof value === "string"),
  );
}

function makeTransport(options) {
  if (options.url !== null) {
    const token = process.env.CODEWEAVER_MCP_TOKEN;
    const headers = token ? { Authorization: `Bearer ${token}` } : {};
    return new StreamableHTTPClientTransport(new URL(options.url), { requestInit: { headers } });
  }
  return new StdioClientTransport({
    command: options.command,
    args: options.args,
    env: stringEnv(), // the SDK's default keeps only HOME, PATH and a few more
    cwd: process.cwd(),
    stderr: "inherit", // the server's log goes to this process's stderr
  });
}

function textOf(result) {
  return (result.content ?? [])
    .filter((block) => block.type === "text")
    .map((block) => block.text)
    .join("\n");
}

// Whether the SDK's validator (the one `callTool` used) would reject the structured content
// with one field too many: the check that accepted the real one is not vacuous.
function rejectsExtraField(schema, structured) {
  if (!schema || !structured) return null;
  const validate = new AjvJsonSchemaValidator().getValidator(schema);
  return !validate({ ...structured, not_in_the_schema: true }).valid;
}

async function callTool(client, name, args, schema, problems) {
  const progress = [];
  const result = await client.callTool({ name, arguments: args }, undefined, {
    timeout: TIMEOUT_MS,
    resetTimeoutOnProgress: true,
    onprogress: (p) => progress.push(p.message ?? ""),
  });
  if (result.isError) problems.push(`${name} failed: ${textOf(result)}`);
  if (result.structuredContent === undefined) problems.push(`${name}: no structuredContent`);
  return {
    is_error: Boolean(result.isError),
    text: textOf(result),
    structured_content: result.structuredContent ?? null,
    extra_field_rejected: rejectsExtraField(schema, result.structuredContent),
    progress,
  };
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  const transport = makeTransport(options);
  let negotiated = null;
  // The client hands the version the server chose to its transport (the HTTP transport
  // keeps it for its headers); the stdio transport has no use for it, so catch it here.
  const setProtocolVersion = transport.setProtocolVersion?.bind(transport);
  transport.setProtocolVersion = (version) => {
    negotiated = version;
    setProtocolVersion?.(version);
  };
  const client = new Client({ name: "codeweaver-ts-e2e", version: "1.0.0" });
  const problems = [];
  const report = { transport: options.url !== null ? "streamable-http" : "stdio" };
  await client.connect(transport, { timeout: TIMEOUT_MS });
  try {
    report.protocol_version = negotiated;
    report.client_protocol_version = LATEST_PROTOCOL_VERSION;
    report.server = client.getServerVersion() ?? null;
    report.server_capabilities = client.getServerCapabilities() ?? null;

    const tools = (await client.listTools()).tools;
    report.tools = tools.map((tool) => tool.name);
    report.with_output_schema = tools.filter((t) => t.outputSchema).map((t) => t.name);
    report.without_output_schema = tools.filter((t) => !t.outputSchema).map((t) => t.name);
    report.output_schemas = Object.fromEntries(tools.map((t) => [t.name, t.outputSchema ?? null]));
    for (const name of report.without_output_schema) problems.push(`${name}: no outputSchema`);
    if (!report.tools.includes("ask")) throw new Error(`no ask tool in ${report.tools}`);

    report.ask = await callTool(
      client,
      "ask",
      { question: options.question },
      report.output_schemas.ask,
      problems,
    );
    report.searches = {};
    for (const { tool, query } of options.searches) {
      report.searches[tool] = await callTool(
        client,
        tool,
        { query },
        report.output_schemas[tool],
        problems,
      );
    }
  } finally {
    await client.close();
  }
  process.stdout.write(JSON.stringify({ ...report, problems }) + "\n");
  if (problems.length > 0) {
    process.stderr.write(problems.join("\n") + "\n");
    process.exitCode = 1;
  }
}

main().catch((error) => {
  process.stderr.write(`${error?.stack ?? error}\n`);
  process.exit(1);
});
