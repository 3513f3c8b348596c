// The agent flow through the official TypeScript SDK's client: connect to
// cairn's MCP endpoint with a URL and a bearer token, create a workspace
// and provision its volume, write and read a file, pack a directory into an
// artifact, snapshot the workspace. The SDK checks every structured result against
// the tool's output schema. Prints one JSON line of what it saw; any tool
// error exits non-zero.
//
// node flow.mjs URL WORKSPACE   (the token in CAIRN_TOKEN)
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, workspace] = process.argv.slice(2);
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${process.env.CAIRN_TOKEN}` } },
});
const client = new Client({ name: "cairn-flow", version: "1.0.0" });
await client.connect(transport);

// listTools first: the client keeps the output schemas it validates with.
const { tools } = await client.listTools();

async function call(name, args) {
  const result = await client.callTool({ name, arguments: { workspace_name: workspace, ...args } });
  if (result.isError) {
    throw new Error(`${name}: ${result.content.map((c) => c.text).join(" ")}`);
  }
  return result;
}

const text = "written by the TypeScript SDK\n";
await call("create_workspace", { description: "made by an agent" });
await call("provision_volume", {});
const ws = (await call("get_workspace", {})).structuredContent.workspace;
await call("create_directory", { path: "/mnt/cairn/ws/flow/sub" });
await call("write_file", { path: "/mnt/cairn/ws/flow/hello.txt", content: text });
await call("write_file", { path: "/mnt/cairn/ws/flow/sub/second.txt", content: "two\n" });
const read = (await call("read_file", { path: "/mnt/cairn/ws/flow/hello.txt" })).structuredContent;
const packed = await call("upload_artifact", {
  source_path: "/mnt/cairn/ws/flow",
  artifact_name: "flow-pack",
  format: "tar.gz",
});
const snapshot = (await call("snapshot_workspace", { snapshot_name: "flow-snap" })).structuredContent.snapshot;
await client.close();

console.log(JSON.stringify({
  protocol_version: transport.protocolVersion,
  tools: tools.length,
  volume_state: ws.volume_state,
  read: read.content,
  artifact: packed.structuredContent.artifact.name,
  links: packed.content.filter((c) => c.type === "resource_link").map((c) => c.uri),
  snapshot: snapshot.name,
}));
