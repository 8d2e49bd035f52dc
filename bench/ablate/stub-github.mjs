// A GitHub stand-in for the ablations, in a process of its own so its CPU is not the client's:
// installation tokens for POST …/access_tokens, an issue for anything else, answered at once.
import http from "node:http";

const issue = JSON.stringify({
  id: 1,
  number: 1,
  title: "Greet people by name",
  body: "x".repeat(1500),
  state: "open",
  user: { login: "octocat", id: 1, type: "User" },
  labels: [],
});

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on("data", (chunk) => chunks.push(chunk));
  req.on("end", () => {
    const headers = {
      "content-type": "application/json; charset=utf-8",
      "x-ratelimit-limit": "5000",
      "x-ratelimit-remaining": "4999",
      "x-github-request-id": "0000:0000",
    };
    if (req.method === "POST" && /\/app\/installations\/\d+\/access_tokens$/.test(req.url ?? "")) {
      const asked = JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}");
      res.writeHead(201, headers).end(
        JSON.stringify({
          token: `ghs_${Math.random().toString(36).slice(2)}`,
          expires_at: new Date(Date.now() + 3_600_000).toISOString(),
          permissions: asked.permissions ?? { issues: "write" },
          repository_selection: "selected",
        }),
      );
    } else res.writeHead(200, headers).end(issue);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, "127.0.0.1", () => process.send?.({ port: server.address().port }));
process.on("disconnect", () => process.exit(0));
