"""The languages of a query: its stop words, and the stems its words are matched by.

Both backends index every text as English (FTS5's `porter` tokenizer, PostgreSQL's `english`
configuration), which leaves German and Spanish words whole: "Rechnungen" was indexed as
`rechnungen` and never matched "Rechnung". Rather than guess each item's language when it is
written (a short chat message says little of its language, and every message would pay for it),
a query's words are also matched by their German or Spanish stem as a prefix: "Rechnungen"
stems to `rechnung` and `rechnung*` finds "Rechnung", "Rechnungen" and "Rechnungsnummer";
"facturas" stems to `factur`, which finds "factura" and "facturación". The index is unchanged.

The query's language is told by its stop words (the Snowball lists, as in PostgreSQL's
`german.stop` and `spanish.stop`): a question holds several ("Was hat Anna über die
Rechnungen gesagt?"). An English query keeps its English matching alone, so English results
do not move; a German or Spanish one drops that language's stop words and gains its stems; a
query with no stop word at all ("Rechnungen 2024") gains both languages' stems.
"""

import threading

import Stemmer

ENGLISH, GERMAN, SPANISH = "english", "german", "spanish"
STEMMED = (GERMAN, SPANISH)
# A stem shorter than this is too short a prefix: Spanish "pagamos" stems to `pag`, which
# would find "page" and "pago" alike.
MIN_PREFIX = 4

_GERMAN_STOP = """aber alle allem allen aller alles als also am an ander andere anderem anderen
anderer anderes anderm andern anderr anders auch auf aus bei bin bis bist da damit dann der den
des dem die das daß derselbe derselben denselben desselben demselben dieselbe dieselben dasselbe
dazu dein deine deinem deinen deiner deines denn derer dessen dich dir du dies diese diesem
diesen dieser dieses doch dort durch ein eine einem einen einer eines einig einige einigem
einigen einiger einiges einmal er ihn ihm es etwas euer eure eurem euren eurer eures für gegen
gewesen hab habe haben hat hatte hatten hier hin hinter ich mich mir ihr ihre ihrem ihren ihrer
ihres euch im in indem ins ist jede jedem jeden jeder jedes jene jenem jenen jener jenes jetzt
kann kein keine keinem keinen keiner keines können könnte machen man manche manchem manchen
mancher manches mein meine meinem meinen meiner meines mit muss musste nach nicht nichts noch
nun nur ob oder ohne sehr sein seine seinem seinen seiner seines selbst sich sie ihnen sind so
solche solchem solchen solcher solches soll sollte sondern sonst über um und uns unsere unserem
unseren unser unseres unter viel vom von vor während war waren warst was weg weil weiter welche
welchem welchen welcher welches wenn werde werden wie wieder will wir wird wirst wo wollen wollte
würde würden zu zum zur zwar zwischen"""
_SPANISH_STOP = """de la que el en y a los del se las por un para con no una su al lo como más
pero sus le ya o este sí porque esta entre cuando muy sin sobre también me hasta hay donde quien
desde todo nos durante todos uno les ni contra otros ese eso ante ellos e esto mí antes algunos
qué unos yo otro otras otra él tanto esa estos mucho quienes nada muchos cual poco ella estar
estas algunas algo nosotros mi mis tú te ti tu tus ellas nosotras vosotros vosotras os mío mía
míos mías tuyo tuya tuyos tuyas suyo suya suyos suyas nuestro nuestra nuestros nuestras vuestro
vuestra vuestros vuestras esos esas estoy estás está estamos estáis están esté estés estemos
estéis estén estaré estarás estará estaremos estaréis estarán estaría estarías estaríamos
estaríais estarían estaba estabas estábamos estabais estaban estuve estuviste estuvo estuvimos
estuvisteis estuvieron estuviera estuvieras estuviéramos estuvierais estuvieran estuviese
estuvieses estuviésemos estuvieseis estuviesen estando estado estada estados estadas estad he
has ha hemos habéis han haya hayas hayamos hayáis hayan habré habrás habrá habremos habréis
habrán habría habrías habríamos habríais habrían había habías habíamos habíais habían hube
hubiste hubo hubimos hubisteis hubieron hubiera hubieras hubiéramos hubierais hubieran hubiese
hubieses hubiésemos hubieseis hubiesen habiendo habido habida habidos habidas soy eres es somos
sois son sea seas seamos seáis sean seré serás será seremos seréis serán sería serías seríamos
seríais serían era eras éramos erais eran fui fuiste fue fuimos fuisteis fueron fuera fueras
fuéramos fuerais fueran fuese fueses fuésemos fueseis fuesen siendo sido tengo tienes tiene
tenemos tenéis tienen tenga tengas tengamos tengáis tengan tendré tendrás tendrá tendremos
tendréis tendrán tendría tendrías tendríamos tendríais tendrían tenía tenías teníamos teníais
tenían tuve tuviste tuvo tuvimos tuvisteis tuvieron tuviera tuvieras tuviéramos tuvierais
tuvieran tuviese tuvieses tuviésemos tuvieseis tuviesen teniendo tenido tenida tenidos tenidas
tened"""
STOPWORDS = {GERMAN: frozenset(_GERMAN_STOP.split()), SPANISH: frozenset(_SPANISH_STOP.split())}

# PyStemmer (Snowball in C) stems a word in under a microsecond; the pure-Python snowballstemmer
# took 280 us, 3 ms for a question's words in two languages. Its stemmers are not thread-safe:
# one per thread.
_local = threading.local()


def query_language(words: list[str], english_stopwords: frozenset[str]) -> str | None:
    """Return the language whose stop words the query holds most of (English on a tie), or
    None when it holds none."""
    counts = {ENGLISH: sum(word in english_stopwords for word in words)}
    for language, stopwords in STOPWORDS.items():
        counts[language] = sum(word in stopwords for word in words)
    best = max(counts, key=lambda language: (counts[language], language == ENGLISH))
    return best if counts[best] else None


def stem_prefixes(word: str, languages: tuple[str, ...]) -> tuple[str, ...]:
    """Return the prefixes that find the word's other forms in these languages.

    Each language's stem, and the word's own first letters as long as the stem: Snowball
    drops accents and umlauts ("decisión" → `decision`, "Häuser" → `haus`) that PostgreSQL's
    index keeps, so `decisión*` and `häus*` are asked for too.
    """
    prefixes: list[str] = []
    for language in languages:
        stem = _stemmer(language).stemWord(word)
        if len(stem) < MIN_PREFIX:
            continue
        prefixes += [stem, word[: len(stem)]]
    # A prefix that starts with another one finds nothing more.
    return tuple(
        prefix
        for index, prefix in enumerate(prefixes)
        if prefix not in prefixes[:index]
        and not any(p != prefix and prefix.startswith(p) for p in prefixes)
    )


def _stemmer(language: str):
    stemmers = getattr(_local, "stemmers", None)
    if stemmers is None:
        stemmers = _local.stemmers = {}
    if language not in stemmers:
        stemmers[language] = Stemmer.Stemmer(language)
    return stemmers[language]
