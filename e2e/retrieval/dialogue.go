package retrieval

import (
	"fmt"
	"strings"
)

// Dialogue generates the "dialogue" collection: six long conversations
// between two friends, 14 sessions each, every turn stored as one memory
// (title "<speaker> · session s · turn t", the turn's text as content, no
// other fields, as an agent keeping a chat log would). People mention facts
// about their lives (a pet's name, a new job, a trip, ...) in one session;
// questions about them are asked through memory_recall two or more
// sessions later, while later sessions are still being stored. The turn
// stating the fact is relevant (grade 2), the friend's reply repeating it
// partly relevant (grade 1). Small talk and lines that share a fact's
// words without its answer ("my neighbour's dog kept barking") fill the
// rest, and questions name the person only as the title does, so they are
// written the way people ask: "What is the name of Alice's dog?".
func Dialogue() *Collection {
	const (
		sessions        = 14
		factSessions    = 12 // sessions that introduce facts; the last two only talk
		factsPerSession = 2
		seed            = 20260802
	)
	r := newRNG(seed)
	pairs := [][2]string{{"Alice", "Bruno"}, {"Chen", "Dana"}, {"Emeka", "Farah"}, {"Gwen", "Hiro"}, {"Ines", "Jonah"}, {"Kofi", "Lena"}}
	c := &Collection{Name: "dialogue", Qrels: map[string]map[string]int{}}
	for ci, people := range pairs {
		ns := fmt.Sprintf("conv%d", ci+1)
		type fact struct {
			kind    *factKind
			owner   int
			slots   []string
			session int
			said    []string // doc ids: statement first, then echo
		}
		var facts []*fact
		used := map[string]bool{}
		for s := range factSessions {
			for range factsPerSession {
				for {
					k := &factKinds[r.intn(len(factKinds))]
					owner := r.intn(2)
					key := fmt.Sprint(owner, k.name)
					if used[key] {
						continue
					}
					used[key] = true
					facts = append(facts, &fact{kind: k, owner: owner, slots: k.fill(r), session: s})
					break
				}
			}
		}
		type asked struct {
			q     Query
			fact  *fact
			after int // session before which it is asked
		}
		var questions []asked
		for _, f := range facts {
			n := 1
			if r.chance(0.5) {
				n = 2
			}
			order := perm(r, len(f.kind.ask))
			for _, i := range order[:min(n, len(order))] {
				text := expand(f.kind.ask[i], f.slots, people[f.owner])
				when := f.session + 2 + r.intn(sessions-f.session-1)
				questions = append(questions, asked{q: Query{Namespace: ns, Text: text}, fact: f, after: when})
			}
		}
		sessionStart := make([]int, sessions+1)
		for s := range sessions {
			sessionStart[s] = len(c.Docs)
			type line struct {
				speaker int // -1: either
				text    string
				fact    *fact
				echo    bool
			}
			var lines []line
			lines = append(lines, line{-1, pick(r, openers), nil, false}, line{-1, pick(r, smallTalk), nil, false})
			var body []line
			for _, f := range facts {
				if f.session != s {
					continue
				}
				body = append(body, line{f.owner, expand(pick(r, f.kind.say), f.slots, ""), f, false})
				if r.chance(0.6) {
					body = append(body, line{1 - f.owner, expand(pick(r, f.kind.echo), f.slots, ""), f, true})
				}
				body = append(body, line{-1, pick(r, smallTalk), nil, false})
			}
			for range 4 + r.intn(3) {
				k := &factKinds[r.intn(len(factKinds))]
				at := r.intn(len(body) + 1)
				d := line{-1, expand(pick(r, k.distract), k.fill(r), ""), nil, false}
				body = append(body[:at], append([]line{d}, body[at:]...)...)
			}
			for range 3 + r.intn(4) {
				at := r.intn(len(body) + 1)
				body = append(body[:at], append([]line{{-1, pick(r, smallTalk), nil, false}}, body[at:]...)...)
			}
			lines = append(lines, body...)
			lines = append(lines, line{-1, pick(r, closers), nil, false})
			speaker := r.intn(2)
			for t, l := range lines {
				if l.speaker >= 0 {
					speaker = l.speaker
				}
				id := fmt.Sprintf("c%d-s%02d-t%02d", ci+1, s+1, t+1)
				c.Docs = append(c.Docs, Doc{
					ID:        id,
					Namespace: ns,
					Title:     fmt.Sprintf("%s · session %d · turn %d", people[speaker], s+1, t+1),
					Content:   l.text,
				})
				if l.fact != nil {
					l.fact.said = append(l.fact.said, id)
				}
				speaker = 1 - speaker
			}
		}
		sessionStart[sessions] = len(c.Docs)
		// Questions in the order they are asked: by session, then as drawn.
		qn := 0
		for s := 0; s <= sessions; s++ {
			for _, a := range questions {
				if a.after != s {
					continue
				}
				q := a.q
				qn++
				q.ID = fmt.Sprintf("c%d-q%02d", ci+1, qn)
				q.After = sessionStart[s]
				c.Queries = append(c.Queries, q)
				for i, id := range a.fact.said {
					grade := 2
					if i > 0 {
						grade = 1
					}
					c.judge(q.ID, id, grade)
				}
			}
		}
	}
	return c
}

func perm(r *rng, n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	for i := n - 1; i > 0; i-- {
		j := r.intn(i + 1)
		p[i], p[j] = p[j], p[i]
	}
	return p
}

// expand fills {a}, {b}, {c} with slots and {X} with the person's name.
func expand(tmpl string, slots []string, person string) string {
	out := strings.ReplaceAll(tmpl, "{X}", person)
	for i, s := range slots {
		out = strings.ReplaceAll(out, "{"+string(rune('a'+i))+"}", s)
	}
	return capitalize(out)
}

// factKind is one kind of thing people tell each other: its slot values,
// how it is said, echoed and asked about, and lines that share its words
// without its answer.
type factKind struct {
	name                     string
	slots                    [][]string
	say, echo, ask, distract []string
}

func (k *factKind) fill(r *rng) []string {
	out := make([]string, len(k.slots))
	for i, vals := range k.slots {
		out[i] = pick(r, vals)
	}
	return out
}

var factKinds = []factKind{
	{name: "pet",
		slots: [][]string{{"dog", "cat", "parrot", "rabbit", "hamster", "tortoise", "ferret", "puppy", "kitten"},
			{"Biscuit", "Pepper", "Mochi", "Luna", "Ziggy", "Waffles", "Noodle", "Pickles", "Juniper", "Olive", "Rocket", "Maple"}},
		say: []string{"guess what, we adopted a {a} last weekend! We named her {b}.",
			"I finally got a {a} from the shelter, his name is {b}.",
			"big news at home: a little {a} called {b} moved in with us."},
		echo:     []string{"a {a} named {b}? That is adorable, send me pictures!", "{b} is such a cute name for a {a}."},
		ask:      []string{"What is the name of {X}'s {a}?", "What kind of pet did {X} adopt?", "What did {X} name the new {a}?"},
		distract: []string{"my neighbour's {a} kept barking all night.", "I saw a {a} in the park today and thought of getting a pet.", "do you think a {a} is a good pet for a small flat?"}},
	{name: "job",
		slots: [][]string{{"nurse", "accountant", "carpenter", "data analyst", "pastry chef", "teacher", "architect", "paramedic", "translator", "electrician"},
			{"Northwind", "Bluefin Labs", "Harbor Bakery", "Cedar Clinic", "Atlas Freight", "Greenleaf School", "Orbit Studios", "Riverside Hotel"}},
		say: []string{"I started a new job as a {a} at {b} this week.",
			"so I accepted the offer, I'm working as a {a} at {b} now.",
			"my first week at {b} went well, being a {a} there suits me."},
		echo:     []string{"a {a} at {b}, congratulations on the new job!", "{b} is lucky to have you as their {a}."},
		ask:      []string{"Where does {X} work now?", "What new job did {X} start?", "Which company hired {X} as a {a}?"},
		distract: []string{"work has been exhausting this week.", "my cousin is looking for a new job as a {a} too.", "do you still like your job?"}},
	{name: "trip",
		slots: [][]string{{"Lisbon", "Kyoto", "Reykjavik", "Marrakesh", "Vancouver", "Prague", "Cusco", "Hanoi", "Tallinn", "Cape Town"},
			{"the old castle", "the night market", "the glacier lagoon", "the botanical garden", "the cathedral", "the cable car ride", "the street food tour"}},
		say: []string{"we just got back from {a}! {b} was the highlight of the trip.",
			"our vacation in {a} was amazing, especially {b}.",
			"I'm still dreaming about {a}, we spent a whole day at {b}."},
		echo:     []string{"{a} sounds wonderful, I'd love to see {b} someday.", "{b} in {a}? That sounds like a perfect trip."},
		ask:      []string{"Which city did {X} visit on vacation?", "What was the highlight of {X}'s trip to {a}?", "Where did {X} travel recently?"},
		distract: []string{"I really need a vacation soon.", "have you ever been to {a}? I hear the trip is long.", "traveling with kids is so hard."}},
	{name: "instrument",
		slots: [][]string{{"piano", "violin", "cello", "ukulele", "saxophone", "drums", "banjo", "harp", "trumpet"},
			{"an online course", "my neighbour", "a retired jazz musician", "my aunt", "a music student"}},
		say: []string{"I've been learning to play the {a} for a month now, {b} is teaching me.",
			"I started {a} lessons with {b}, my fingers hurt already.",
			"every evening I practice the {a}, {b} gives me a lesson on Saturdays."},
		echo:     []string{"the {a}? That's so cool, you'll have to play for me.", "learning the {a} from {b} sounds fun."},
		ask:      []string{"What instrument is {X} learning to play?", "Who is teaching {X} to play the {a}?"},
		distract: []string{"I used to play an instrument as a kid.", "there was a {a} player on the street downtown.", "I wish I had learned to play something."}},
	{name: "book",
		slots: [][]string{{"The Silent Orchard", "Winter of the Fox", "A Map of Small Things", "The Glass Harbor", "Echoes of Copper", "The Last Lighthouse", "Salt and Starlight"},
			{"Mara Quinn", "Tobias Wren", "Elena Voss", "Samuel Okoro", "Priya Nair", "Jonas Hale"}},
		say: []string{"I'm reading {a} by {b}, I can't put it down.",
			"just finished {a}, {b} is a brilliant writer.",
			"my book club picked {a} by {b} and I love it."},
		echo:     []string{"I've heard good things about {b}.", "{a} is on my list too!"},
		ask:      []string{"What book is {X} reading?", "Who wrote the book {X} was reading?"},
		distract: []string{"I haven't read a good book in ages.", "do you have any book recommendations?", "my reading list keeps getting longer."}},
	{name: "wedding",
		slots: [][]string{{"sister", "brother", "cousin", "best friend"},
			{"Maya", "Theo", "Rosa", "Felix", "Amara", "Oskar", "Nina", "Leo"},
			{"March", "April", "June", "September", "October", "December"}},
		say: []string{"my {a} {b} is getting married in {c}!",
			"big family news: {b}, my {a}, set the wedding for {c}.",
			"{b} finally proposed, so my {a} has a wedding in {c}."},
		echo:     []string{"a wedding in {c}, how exciting for {b}!", "tell {b} congratulations from me."},
		ask:      []string{"When is {X}'s {a} getting married?", "What is the name of {X}'s {a} who is getting married?"},
		distract: []string{"weddings are so expensive these days.", "my {a} called me yesterday about nothing much.", "I need a new suit for a friend's wedding."}},
	{name: "move",
		slots: [][]string{{"Denver", "Glasgow", "Montreal", "Porto", "Adelaide", "Seattle", "Leeds"},
			{"a shorter commute", "my partner's new job", "a bigger garden", "being closer to family", "lower rent"}},
		say: []string{"we're moving to {a} next month, mostly for {b}.",
			"we decided to move to {a} because of {b}.",
			"the flat in {a} is ours, the move is all about {b}."},
		echo:     []string{"moving to {a} is a big step, good luck with the packing.", "{a} will be great for {b}."},
		ask:      []string{"Why is {X} moving to {a}?", "Which city is {X} moving to?"},
		distract: []string{"packing boxes is the worst.", "my landlord raised the rent again.", "I'd never move to {a}, it's too far."}},
	{name: "cooking",
		slots: [][]string{{"mushroom risotto", "lamb tagine", "pad thai", "beef wellington", "vegetable lasagna", "shakshuka", "paella", "ramen"},
			{"a family anniversary", "a dinner party", "a birthday lunch", "the book club night"}},
		say: []string{"I cooked {a} for {b} and it turned out great.",
			"for {b} I tried making {a} from scratch.",
			"everyone loved the {a} I made for {b}."},
		echo:     []string{"homemade {a}? I'm jealous.", "{a} for {b} sounds delicious."},
		ask:      []string{"What dish did {X} cook for {b}?", "What did {X} make for {b}?"},
		distract: []string{"I'm too tired to cook tonight.", "we ordered takeout again.", "I burned the {a} last time I tried."}},
	{name: "marathon",
		slots: [][]string{{"Berlin", "Chicago", "Boston", "Valencia", "Dublin"},
			{"three hours and forty minutes", "four hours flat", "just under four hours", "three hours and fifty minutes"}},
		say: []string{"I ran the {a} marathon and finished in {b}!",
			"the {a} marathon was brutal but I made it in {b}.",
			"crossed the finish line in {a} after {b}, my legs are jelly."},
		echo:     []string{"{b}? That's an amazing time for {a}.", "running the {a} marathon, wow!"},
		ask:      []string{"How long did it take {X} to finish the {a} marathon?", "Which marathon did {X} run?"},
		distract: []string{"my knees hurt after my run this morning.", "I'm thinking of signing up for a race.", "running in the rain is miserable."}},
	{name: "purchase",
		slots: [][]string{{"red", "navy blue", "forest green", "silver", "yellow", "white"},
			{"bicycle", "scooter", "pickup truck", "hatchback", "camper van", "motorbike"}},
		say: []string{"I finally bought a {a} {b}!",
			"treated myself to a {a} {b} this weekend.",
			"the {a} {b} I ordered arrived today."},
		echo:     []string{"a {a} {b}, nice choice!", "I can picture you on a {a} {b}."},
		ask:      []string{"What color is the {b} {X} bought?", "What vehicle did {X} buy?"},
		distract: []string{"the car needs new tires again.", "traffic was terrible today.", "I want a {b} but they cost too much."}},
	{name: "allergy",
		slots: [][]string{{"peanuts", "shellfish", "cats", "pollen", "penicillin", "strawberries"},
			{"after a rash", "after some tests", "after a bad reaction"}},
		say: []string{"the doctor told me I'm allergic to {a}, I found out {b}.",
			"turns out I have an allergy to {a}, we learned it {b}.",
			"no more {a} for me, I'm allergic, the doctor confirmed it {b}."},
		echo:     []string{"allergic to {a}? That must be hard.", "I'll remember no {a} when you visit."},
		ask:      []string{"What is {X} allergic to?", "What allergy did the doctor find for {X}?"},
		distract: []string{"the doctor's office was packed today.", "spring always makes me sneeze.", "I should see a doctor about my back."}},
	{name: "class",
		slots: [][]string{{"pottery", "Spanish", "photography", "woodworking", "astronomy", "Italian cooking", "salsa dancing"},
			{"the community college", "the library", "an evening school", "the art centre"}},
		say: []string{"I signed up for a {a} class at {b}.",
			"my {a} class at {b} starts on Monday.",
			"I'm taking {a} at {b} this term."},
		echo:     []string{"a {a} class sounds like fun.", "{b} has great classes."},
		ask:      []string{"What class did {X} sign up for?", "Where is {X} taking the {a} class?"},
		distract: []string{"I always wanted to take a class in something creative.", "the {a} class at {b} was full when I asked.", "school was so long ago."}},
	{name: "garden",
		slots: [][]string{{"tomatoes", "sunflowers", "lavender", "chili peppers", "strawberries", "an apple tree"},
			{"the backyard", "the balcony", "the community garden"}},
		say: []string{"I planted {a} in {b} last weekend.",
			"{b} now has {a}, I planted them myself.",
			"spent Sunday planting {a} in {b}."},
		echo:     []string{"{a} in {b}? I'd love to see them grow.", "you have such a green thumb."},
		ask:      []string{"What did {X} plant in {b}?", "Where did {X} plant the {a}?"},
		distract: []string{"the garden is a mess after the storm.", "I killed another plant, I'm hopeless.", "we should plant something in {b}."}},
	{name: "concert",
		slots: [][]string{{"The Velvet Owls", "Neon Harbor", "Paper Kites Orchestra", "Midnight Foxes", "Copper Lanterns"},
			{"the old theatre", "the city park", "the arena", "a small jazz club"}},
		say: []string{"we saw {a} live at {b}, what a show!",
			"{a} played {b} last night and we were in the front row.",
			"I got tickets to {a} at {b} and it was the best concert ever."},
		echo:     []string{"{a} live? I'm so jealous.", "{b} is a great place for a concert."},
		ask:      []string{"Which band did {X} see live?", "Where did {X} see {a} perform?"},
		distract: []string{"I haven't been to a concert in years.", "the music at {b} was too loud for me.", "do you still listen to the same bands?"}},
}

var openers = []string{"hey! How have you been?", "hi, long time no talk!", "good to hear from you again.",
	"hey, do you have a minute to chat?", "morning! How was your week?", "hello again, what's new with you?"}

var closers = []string{"I should go, talk soon!", "take care, let's catch up next week.", "it was good talking to you.",
	"okay, I have to run, bye!", "let's talk again soon.", "good night, say hi to everyone for me."}

var smallTalk = []string{
	"pretty good, just busy with work and everything.", "that sounds like a lot, how are you holding up?",
	"honestly, I think I just need more sleep.", "ha, tell me about it.", "what have you been up to lately?",
	"not much, the usual.", "oh wow, really?", "that's great to hear!", "I know, right?", "anyway, what about you?",
	"the weather has been so strange lately.", "did you watch the game last night?",
	"I'm trying to eat healthier this month.", "my phone died in the middle of the day, what a mess.",
	"we should get coffee sometime.", "I keep meaning to call my parents more often.",
	"time really flies, doesn't it?", "I did nothing special this weekend, just rested.", "sounds like a plan.",
	"I totally agree with you.", "let me know how it goes!", "haha, that made my day.",
	"what did you do last weekend?", "how is everyone at home?", "I can't believe it's already this late in the year.",
	"that reminds me, I have to pay some bills.", "what do you think about that?", "it's been a strange few weeks.",
	"I'm so happy for you.", "that must have been hard.", "I've been thinking about what you said last time.",
	"when did that happen?", "who else was there?", "where did you hear about it?", "why do you think that is?",
	"I had the longest day today.", "we finally cleaned the whole house.", "the kids next door are so loud.",
	"I need a new hobby, any ideas?", "let's plan something fun for next month.",
}
