import { describe, expect, it } from "vitest";
import { deliveryJob } from "../../src/jobs/from-webhook.js";
import { commentPayload, reviewPayload } from "../helpers/app.js";

/**
 * A bot never commands Blueprint, whoever GitHub names as the event's sender: the comment's or the
 * review's own author counts. (Every other fixture makes author and sender the same account.)
 */

const person = { login: "maintainer", type: "User" };
const bots = [
  ["typed Bot", { login: "helper-app[bot]", type: "Bot" }],
  ["named …[bot]", { login: "helper-app[bot]", type: "User" }],
] as const;

function comment(author: { login: string; type: string }, sender: { login: string; type: string }) {
  const payload = commentPayload({ body: "/build", cloneUrl: "https://github.com/Codertocat/Hello-World.git" });
  payload.comment.user = { ...payload.comment.user, ...author };
  payload.sender = { ...payload.sender, ...sender };
  return deliveryJob({ id: "d-bot", name: "issue_comment", payload });
}

function review(author: { login: string; type: string }, sender: { login: string; type: string }) {
  const payload = reviewPayload({
    state: "approved",
    commitId: "0".repeat(40),
    login: "maintainer",
    cloneUrl: "https://github.com/Codertocat/Hello-World.git",
  });
  payload.review.user = { ...payload.review.user, ...author };
  payload.sender = { ...payload.sender, ...sender };
  return deliveryJob({ id: "d-bot", name: "pull_request_review", payload });
}

describe("a bot's comment or review is no command, even when a person is the event's sender", () => {
  it.each(bots)("a /build comment by a bot (%s), sent by a person: no job", (_, bot) => {
    expect(comment(bot, person)).toBeNull();
    // Control: the same comment by the person is a build.
    expect(comment(person, person)?.job).toMatchObject({ kind: "build", actor: "maintainer" });
  });

  it.each(bots)("a person's /build, sent by a bot (%s): no job", (_, bot) => {
    expect(comment(person, bot)).toBeNull();
  });

  it.each(bots)("an approving review by a bot (%s), sent by a person: no build", (_, bot) => {
    expect(review(bot, person)).toBeNull();
    expect(review(person, person)?.job).toMatchObject({ kind: "review-approval", actor: "maintainer" });
  });
});
