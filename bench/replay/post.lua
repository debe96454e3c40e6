-- wrk script: POST the JSON body in the file named by the REPLAY_BODY environment variable
-- (written by `npm run bench:serve`). Every request sends the same body.
local file = assert(io.open(assert(os.getenv("REPLAY_BODY"), "set REPLAY_BODY to a body file of the replay kit"), "r"))
wrk.method = "POST"
wrk.body = file:read("*a")
file:close()
wrk.headers["Content-Type"] = "application/json"
