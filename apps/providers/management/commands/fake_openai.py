import time

from django.core.management.base import BaseCommand

from apps.providers.fake_openai import FakeOpenAIServer


class Command(BaseCommand):
    help = "Run the fake OpenAI-compatible server in the foreground, for offline demos."

    def add_arguments(self, parser):
        parser.add_argument("--port", type=int, default=8765, help="Port; 0 picks a free one.")
        parser.add_argument(
            "--host",
            default="127.0.0.1",
            help="Address to bind; 0.0.0.0 only inside a container, it has no authentication.",
        )

    def handle(self, *args, port, host, **options):
        with FakeOpenAIServer(host=host, port=port) as server:
            self.stdout.write(f"Fake OpenAI server at {server.base_url}; in another shell:")
            self.stdout.write(f"  export OPENAI_BASE_URL={server.base_url}")
            self.stdout.write("Any model name works. Press Ctrl-C to stop.")
            try:
                while True:
                    time.sleep(3600)
            except KeyboardInterrupt:
                self.stdout.write("Stopped.")
