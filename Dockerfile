# Serves Roofline Lab on 0.0.0.0:5006 at /app.
#   docker build -t roofline-lab .
#   docker run -p 5006:5006 -e BOKEH_ALLOW_WS_ORIGIN=lab.example.org roofline-lab
# BOKEH_ALLOW_WS_ORIGIN (comma-separated host[:port] list) is the websocket origin
# the page is embedded or opened from; the default allows http://localhost:5006.
FROM python:3.11-slim

WORKDIR /lab
# The locked versions (requirements.lock, hashes checked), then the lab itself on top of them.
COPY requirements.lock ./
RUN pip install --no-cache-dir --require-hashes -r requirements.lock
COPY pyproject.toml README.md ./
COPY core core
COPY app app
RUN pip install --no-cache-dir --no-deps .

ENV BOKEH_ALLOW_WS_ORIGIN=localhost:5006
EXPOSE 5006
USER nobody
# --reuse-sessions: a class opening the page at once gets each session built once (README, "Serving a class").
CMD ["panel", "serve", "app", "--address", "0.0.0.0", "--port", "5006", "--reuse-sessions"]
